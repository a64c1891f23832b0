/** Entries written into a file registry's layout by hand, as another process, a script or a mistake would. */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** `<dir>/callisto/<service>:<version>/<kind>/<name>.json` with `content` (JSON unless a string). */
export function writeEntry(
  dir: string,
  segment: string,
  kind: 'providers' | 'consumers',
  name: string,
  content: unknown,
): string {
  const folder = path.join(dir, 'callisto', segment, kind);
  mkdirSync(folder, { recursive: true });
  const file = path.join(folder, `${name}.json`);
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

/** A provider record of `service` on 127.0.0.1:`port`. */
export function providerEntry(service: string, port: number, fields: Record<string, unknown> = {}) {
  return {
    service,
    version: '1.0.0',
    group: '',
    host: '127.0.0.1',
    port,
    protocol: 'callisto',
    serializers: ['msgpack'],
    weight: 100,
    methods: [],
    application: 'by-hand',
    pid: 4242,
    startTime: Date.now() - 3_600_000,
    tags: {},
    ...fields,
  };
}

/** A consumer record of `service`. */
export function consumerEntry(service: string, fields: Record<string, unknown> = {}) {
  return {
    service,
    version: '1.0.0',
    group: '',
    host: 'web-1',
    pid: 777,
    application: 'web',
    startTime: Date.UTC(2024, 4, 1),
    ...fields,
  };
}
