import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BUILTIN_EXTENSION_NAMES, builtinExtensions, type Serializer } from '../../src/extend.js';
import { ConfigError, defineService } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

// The name of the serializer the module below registers, declared to the compiler.
declare module '../../src/index.js' {
  interface SerializerNames {
    reverse: true;
  }
}

const Echo = defineService<{ echo(value: string): Promise<string> }>('test.ExtEcho', {
  methods: { echo: {} },
});

/** A JSON serializer that counts what it encodes, registered under the built-in's name. */
function countingJson(counter: { encoded: number }): Serializer {
  return {
    id: 1,
    name: 'json',
    encode(value) {
      counter.encoded++;
      return Buffer.from(JSON.stringify(value));
    },
    decode(bytes) {
      return JSON.parse(Buffer.from(bytes).toString('utf8'));
    },
  };
}

describe('extensions', () => {
  it('registers exactly the built-in names the name types list', () => {
    for (const [kind, names] of Object.entries(BUILTIN_EXTENSION_NAMES)) {
      expect(builtinExtensions.names(kind as keyof typeof BUILTIN_EXTENSION_NAMES).sort()).toEqual(
        [...names].sort(),
      );
    }
  });

  it('registers the built-ins by default', () => {
    expect(builtinExtensions.names('serializer').sort()).toEqual(['hessian2', 'json', 'msgpack', 'v8']);
    expect(builtinExtensions.names('cluster').sort()).toEqual(
      ['broadcast', 'failback', 'failfast', 'failover', 'failsafe', 'forking', 'hedging'].sort(),
    );
    expect(builtinExtensions.names('loadbalance')).toContain('consistenthash');
    expect(builtinExtensions.names('registry')).toEqual(
      expect.arrayContaining(['file', 'etcd', 'zookeeper', 'redis', 'direct']),
    );
  });

  it('lets a user extension with a built-in name override it, for that app only', async () => {
    const counter = { encoded: 0 };
    const provider = await testApp({
      extend: (ext) => ext.register('serializer', 'json', countingJson(counter)),
    });
    provider.provide(Echo, { echo: (value) => value });
    await provider.start();
    const consumer = await testApp({
      extend: (ext) => ext.register('serializer', 'json', countingJson(counter)),
    });
    const echo = consumer.refer(Echo, { url: provider.address!, serializer: 'json' });
    expect(await echo.echo('hi')).toBe('hi');
    expect(counter.encoded).toBe(2); // the arguments, then the result
    expect(builtinExtensions.get('serializer', 'json')).not.toBe(
      provider.extensions.get('serializer', 'json'),
    );
  });

  it('keeps the built-ins in a frozen table that no app registration reaches', async () => {
    expect(Object.isFrozen(builtinExtensions)).toBe(true);
    expect('register' in builtinExtensions).toBe(false);
    const first = await testApp({
      extend: (ext) =>
        ext.register('loadbalance', 'first-only', builtinExtensions.get('loadbalance', 'random')),
    });
    const second = await testApp();
    expect(first.extensions.has('loadbalance', 'first-only')).toBe(true);
    expect(second.extensions.has('loadbalance', 'first-only')).toBe(false);
    expect(builtinExtensions.has('loadbalance', 'first-only')).toBe(false);
  });

  it('loads extension modules named in configuration', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-ext-'));
    const file = path.join(dir, 'reverse-serializer.mjs');
    fs.writeFileSync(
      file,
      `export function register(extensions) {
        extensions.register('serializer', 'reverse', {
          id: 42, name: 'reverse',
          encode: (value) => Buffer.from(JSON.stringify(value).split('').reverse().join('')),
          decode: (bytes) => JSON.parse(Buffer.from(bytes).toString().split('').reverse().join('')),
        });
      }`,
    );
    try {
      const provider = await testApp({ extensions: [file] });
      provider.provide(Echo, { echo: (value) => `${value}!` });
      await provider.start();
      const consumer = await testApp({ extensions: [file] });
      const echo = consumer.refer(Echo, { url: provider.address!, serializer: 'reverse' });
      expect(await echo.echo('abc')).toBe('abc!');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('names the extensions that exist when one is missing', async () => {
    await expect(testApp({ extensions: ['./does-not-exist.mjs'] })).rejects.toThrow(
      /extensions = "\.\/does-not-exist\.mjs"/,
    );
    const app = await testApp();
    const attempt = () => app.refer(Echo, { url: '127.0.0.1:1', serializer: 'protobuf' as never });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(
      /refer\(test\.ExtEcho\)\.serializer = "protobuf".*registered serializer names: .*msgpack/,
    );
  });
});
