/**
 * Call ids over real sockets: the consumer gives every call one id, kept by every attempt and sent to
 * the provider, so the consumer's log lines about a call (a retry) and the provider's access log lines
 * for its attempts carry the same `callId`; a handler reads it as `callContext().callId`; an HTTP
 * caller may name its own in the `callisto-call-id` header, which is replaced when hostile.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  type AppOptions,
  callContext,
  defineFilter,
  defineService,
  type LogFields,
  type Logger,
  RpcError,
} from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { rawConnection, route } from '../support/raw-client.js';

interface Stock {
  count(item: string): Promise<{ count: number; callId: string | undefined }>;
}
const StockDef = defineService<Stock>('test.Stock', { methods: { count: { idempotent: true } } });

afterEach(closeAll);

interface Line {
  message: string;
  fields: LogFields | undefined;
}

function capture(): { lines: Line[]; logger: Logger } {
  const lines: Line[] = [];
  const keep = (message: string, fields?: LogFields) => lines.push({ message, fields });
  return { lines, logger: { debug: keep, info: keep, warn: keep, error: keep } };
}

/** A provider whose `count` fails its first call with a retryable error, logging access lines. */
async function stockProvider(options: AppOptions = {}) {
  const log = capture();
  const app = await testApp({
    logger: log.logger,
    logLevel: 'info',
    ...options,
    server: { accessLog: ['test.Stock'], ...options.server } as AppOptions['server'],
  });
  let calls = 0;
  app.provide(StockDef, {
    async count() {
      const callId = callContext()?.callId;
      if (++calls === 1) throw new RpcError('Internal', 'a passing hiccup');
      return { count: 3, callId };
    },
  });
  await app.start();
  return { app, lines: log.lines };
}

const accessLines = (lines: readonly Line[]) => lines.filter((line) => line.message.startsWith('access '));

describe('call ids', () => {
  it('join a consumer’s retry line and the provider’s access log lines for one call', async () => {
    const provider = await stockProvider();
    const consumerLog = capture();
    const seen: (string | undefined)[] = [];
    const consumer = await testApp({
      logger: consumerLog.logger,
      logLevel: 'info',
      filters: {
        consumer: [
          defineFilter({
            name: 'see-call-id',
            position: 'attempt',
            start: (invocation) => seen.push(invocation.callId),
          }),
        ],
      },
    });
    const stock = consumer.refer(StockDef, { url: provider.app.address!, retries: 1 });

    const answer = await stock.count('bolts');

    // both attempts of the call have the call's one id
    expect(seen).toHaveLength(2);
    const callId = seen[0];
    expect(seen[1]).toBe(callId);
    expect(callId).toMatch(/^[0-9a-z]{10}-[0-9a-z]+$/);
    // the handler reads the consumer's id
    expect(answer).toEqual({ count: 3, callId });
    // the consumer's line about the retry carries it
    const retry = consumerLog.lines.find((line) => /retrying/.test(line.message));
    expect(retry?.message).toMatch(/test\.Stock\.count: attempt 1 failed .*Internal/);
    expect(retry?.fields).toMatchObject({ call: 'test.Stock.count', callId });
    // both of the provider's access lines (the failed attempt and the retry) carry the same id
    const access = accessLines(provider.lines);
    expect(access.map((line) => line.message)).toEqual([
      expect.stringMatching(/^access test\.Stock\.count .* outcome=Internal /),
      expect.stringMatching(/^access test\.Stock\.count .* outcome=OK /),
    ]);
    expect(access.map((line) => line.fields?.callId)).toEqual([callId, callId]);

    // another call gets another id
    await stock.count('nuts');
    expect(seen[2]).toBeDefined();
    expect(seen[2]).not.toBe(callId);
    expect(accessLines(provider.lines)[2]?.fields?.callId).toBe(seen[2]);
  });

  it('are given to in-process calls too, the consumer’s id reaching the handler', async () => {
    const log = capture();
    const seen: (string | undefined)[] = [];
    const app = await testApp({
      logger: log.logger,
      logLevel: 'info',
      server: { accessLog: ['test.Stock'] } as AppOptions['server'],
      filters: {
        consumer: [defineFilter({ name: 'see', position: 'call', start: (i) => seen.push(i.callId) })],
      },
    });
    app.provide(StockDef, { count: async () => ({ count: 1, callId: callContext()?.callId }) });
    const answer = await app.refer(StockDef).count('bolts');
    expect(seen[0]).toMatch(/^[0-9a-z]{10}-[0-9a-z]+$/);
    expect(answer.callId).toBe(seen[0]);
    expect(accessLines(log.lines).map((line) => line.fields?.callId)).toEqual([seen[0]]);
  });

  it('take an HTTP caller’s callisto-call-id header, and replace a hostile one', async () => {
    const provider = await stockProvider({ server: { http: { port: 0 } } as AppOptions['server'] });
    const url = `http://127.0.0.1:${provider.app.httpPort}/test.Stock/count`;
    const post = async (headers: Record<string, string>) => {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: '["bolts"]',
      });
      const body = (await response.json()) as { callId?: string };
      // the answer names the id the provider used, failure or not
      if (body.callId !== undefined) expect(response.headers.get('callisto-call-id')).toBe(body.callId);
      expect(response.headers.get('callisto-call-id')).toMatch(/^[\w.:-]{1,64}$/);
      return { status: response.status, body: body as unknown };
    };
    // the first call fails (the handler's hiccup); its access line still has the caller's id
    expect((await post({ 'callisto-call-id': 'web-req.42:a_b' })).status).not.toBe(200);
    expect(accessLines(provider.lines)[0]?.fields?.callId).toBe('web-req.42:a_b');

    const hostile = ['x'.repeat(65), 'bad id', 'a"b', 'x=1', 'é'];
    for (const header of hostile) {
      const { status, body } = await post({ 'callisto-call-id': header });
      expect(status).toBe(200);
      const callId = (body as { callId: string }).callId;
      expect(callId).not.toBe(header);
      expect(callId).toMatch(/^[0-9a-z]{10}-[0-9a-z]+$/);
    }
    // without the header the provider makes one
    const { body } = await post({});
    expect((body as { callId: string }).callId).toMatch(/^[0-9a-z]{10}-[0-9a-z]+$/);
    const ids = accessLines(provider.lines).map((line) => line.fields?.callId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('are made by the provider for a call from an older consumer without one, or with a hostile one', async () => {
    const provider = await stockProvider();
    const connection = rawConnection(provider.app.address!);
    await connection.ready();
    const count = route('test.Stock', 'count');
    try {
      await connection.call(count, ['bolts'], { timeoutMs: 5_000 }).catch(() => undefined); // the hiccup
      const old = (await connection.call(count, ['bolts'], { timeoutMs: 5_000 })) as { callId: string };
      const hostile = (await connection.call(count, ['bolts'], {
        timeoutMs: 5_000,
        attachments: { 'callisto-call-id': 'two words\n' },
      })) as { callId: string };
      const kept = (await connection.call(count, ['bolts'], {
        timeoutMs: 5_000,
        attachments: { 'callisto-call-id': 'from-a-gateway.7' },
      })) as { callId: string };
      expect(old.callId).toMatch(/^[0-9a-z]{10}-[0-9a-z]+$/);
      expect(hostile.callId).toMatch(/^[0-9a-z]{10}-[0-9a-z]+$/);
      expect(hostile.callId).not.toBe(old.callId);
      expect(kept.callId).toBe('from-a-gateway.7');
      expect(accessLines(provider.lines).map((line) => line.fields?.callId)).toEqual([
        expect.any(String),
        old.callId,
        hostile.callId,
        'from-a-gateway.7',
      ]);
    } finally {
      await connection.close();
    }
  });
});
