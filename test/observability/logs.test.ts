/**
 * Structured logs: Callisto's lines through pino (`pinoLogger`), one JSON record per line, a line about
 * one call carrying its trace id (from the W3C `traceparent` it arrived with), its method, its caller and
 * the reference the caller was given; the console logger prints the same fields as key=value.
 */
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { defineService, pinoLogger } from '../../src/index.js';
import { createConsoleLogger } from '../../src/observability/logger.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';

interface Files {
  open(name: string): Promise<string>;
}
const FilesDef = defineService<Files>('test.Files', { methods: { open: {} } });

afterEach(closeAll);

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACEPARENT = `00-${TRACE_ID}-00f067aa0ba902b7-01`;

function pinoLines() {
  const records: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _encoding, done) {
      for (const line of String(chunk).split('\n').filter(Boolean)) records.push(JSON.parse(line));
      done();
    },
  });
  return { records, logger: pinoLogger(pino({ level: 'info' }, stream)) };
}

describe('logs', () => {
  it('go through pino as JSON records, a call’s line with its trace id, method, caller and reference', async () => {
    const { records, logger } = pinoLines();
    const provider = await testApp({ logger, logLevel: 'info' });
    provider.provide(FilesDef, {
      async open(name) {
        throw Object.assign(new Error(`ENOENT: no such file, open '${name}'`), {
          code: 'ENOENT',
          syscall: 'open',
          path: name,
        });
      },
    });
    await provider.start();
    const consumer = await testApp();
    const files = consumer.refer(FilesDef, {
      url: provider.address!,
      attachments: { traceparent: TRACEPARENT },
    });
    const error = (await files.open('/etc/secret').then(
      () => new Error('answered'),
      (e: unknown) => e,
    )) as Error;
    expect(error.message).not.toContain('/etc/secret');
    const ref = /ref ([\w-]+)/.exec(error.message)?.[1];
    expect(ref).toBeDefined();

    const line = await waitFor(() => records.find((record) => record.ref === ref));
    expect(line).toMatchObject({
      level: 40,
      traceId: TRACE_ID,
      call: 'test.Files.open',
      ref,
      remote: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
    });
    expect(line.msg).toContain('/etc/secret');
    // lines about no call are records too
    expect(records).toContainEqual(
      expect.objectContaining({ level: 30, msg: expect.stringContaining('serving on') }),
    );
  });

  it('print fields as key=value on the console logger', () => {
    const write = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      createConsoleLogger('info').warn('call failed', { traceId: TRACE_ID, call: 'a.B', note: 'two words' });
      createConsoleLogger('info').debug('not shown');
      expect(write.mock.calls.map((call) => String(call[0]))).toEqual([
        `[callisto] warn: call failed traceId=${TRACE_ID} call=a.B note="two words"\n`,
      ]);
    } finally {
      write.mockRestore();
    }
  });
});
