/**
 * Server streams through the provider's HTTP/JSON entry (docs/http.md, "Streams over HTTP"), over real
 * sockets: Server-Sent Events and NDJSON in order with their end marker, an error mid-stream as the last
 * event or line, the caller going away or its deadline passing ending the handler (its `finally` runs),
 * a reader that reads nothing holding the handler back (socket backpressure), client and two-way streams
 * refused, and the provider's auth applying.
 */
import net from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { AppOptions } from '../../src/index.js';
import { type Probe, streaming, streamingImpl } from '../streams/fixture.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';

afterEach(closeAll);

const TOKEN = 'streams-http-token-0123456789abcdef';

async function start(options: AppOptions = {}) {
  const probe: Probe = { produced: 0, finallyRan: 0, aborted: 0 };
  const app = await testApp({
    application: 'http-streams',
    ...options,
    server: { port: 0, ...options.server, http: { port: 0 } } as AppOptions['server'],
  });
  app.provide(streaming, streamingImpl(probe));
  await app.start();
  return { probe, port: app.httpPort!, base: `http://127.0.0.1:${app.httpPort}/test.Streaming` };
}

function postStream(
  url: string,
  args: unknown[],
  headers: Record<string, string> = {},
  signal?: AbortSignal,
) {
  return fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(args),
    ...(signal === undefined ? {} : { signal }),
  });
}

interface SseEvent {
  event: string;
  data: string;
}

function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event: ')) event = line.slice(7);
        else if (line.startsWith('data: ')) data.push(line.slice(6));
      }
      return { event, data: data.join('\n') };
    });
}

const SSE = { accept: 'text/event-stream' };

describe('server streams over the HTTP entry', () => {
  it('answers Server-Sent Events: 1,000 messages in order, then event: end', async () => {
    const { base, probe } = await start();
    const response = await postStream(`${base}/count`, [1000, -1], SSE);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(response.headers.get('callisto-call-id')).toBeTruthy();
    const events = parseSse(await response.text());
    expect(events).toHaveLength(1001);
    expect(events.slice(0, 1000).map((e) => JSON.parse(e.data).n)).toEqual([...Array(1000).keys()]);
    expect(events.slice(0, 1000).every((e) => e.event === 'message')).toBe(true);
    expect(events[1000]!.event).toBe('end');
    expect(probe.finallyRan).toBe(1);
  });

  it('answers NDJSON without Accept: one line per message, then {"$t":"end"}', async () => {
    const { base } = await start();
    const response = await postStream(`${base}/count`, [1000, -1]);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    const lines = (await response.text()).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines).toHaveLength(1001);
    expect(lines.slice(0, 1000).map((line) => JSON.parse(line).n)).toEqual([...Array(1000).keys()]);
    expect(JSON.parse(lines[1000]!)).toEqual({ $t: 'end' });
  });

  it('ends with the error after the messages already sent, its code, name and declared fields (SSE and NDJSON)', async () => {
    const { base } = await start();
    const sse = parseSse(await (await postStream(`${base}/count`, [100, 10], SSE)).text());
    expect(sse).toHaveLength(11);
    expect(sse.slice(0, 10).map((e) => JSON.parse(e.data).n)).toEqual([...Array(10).keys()]);
    expect(sse[10]!.event).toBe('error');
    const sseError = JSON.parse(sse[10]!.data);
    expect(sseError).toMatchObject({ code: 'ProviderError', name: 'StreamFailed', details: { after: 10 } });
    expect(sseError.message).toContain('failed after 10');

    const lines = (await (await postStream(`${base}/count`, [100, 10])).text()).trim().split('\n');
    expect(lines).toHaveLength(11);
    expect(JSON.parse(lines[10]!)).toMatchObject({
      $t: 'error',
      v: { code: 'ProviderError', name: 'StreamFailed', details: { after: 10 } },
    });
  });

  it('the caller going away ends the handler: its finally runs, its signal aborts', async () => {
    const { base, probe } = await start();
    const controller = new AbortController();
    const response = await postStream(`${base}/slow`, [5], SSE, controller.signal);
    const reader = response.body!.getReader();
    await reader.read(); // the first message arrived: the stream is under way
    controller.abort();
    await waitFor(() => probe.finallyRan === 1, 5_000, { message: 'the handler did not end' });
    expect(probe.aborted).toBe(0); // slow() reads no signal; count() below does
    const counted = new AbortController();
    const second = await postStream(`${base}/count`, [1e9, -1], {}, counted.signal);
    await second.body!.getReader().read();
    counted.abort();
    await waitFor(() => probe.finallyRan === 2 && probe.aborted === 1, 5_000);
  });

  it('the whole stream is bounded by x-callisto-timeout-ms: it ends with a Timeout error event', async () => {
    const { base, probe } = await start();
    const started = Date.now();
    const events = parseSse(
      await (await postStream(`${base}/slow`, [20], { ...SSE, 'x-callisto-timeout-ms': '300' })).text(),
    );
    expect(Date.now() - started).toBeLessThan(5_000);
    const last = events.at(-1)!;
    expect(last.event).toBe('error');
    expect(JSON.parse(last.data)).toMatchObject({ code: 'Timeout' });
    await waitFor(() => probe.finallyRan === 1);
  });

  it('a reader that reads nothing holds the handler back (socket backpressure), and closing ends it', async () => {
    const { port, probe } = await start();
    // an endless producer of ~230-byte lines: without backpressure it never stops (and memory grows)
    const body = JSON.stringify([200]);
    const socket = net.connect(port, '127.0.0.1');
    try {
      await new Promise<void>((resolve, reject) => {
        socket.once('connect', resolve);
        socket.once('error', reject);
      });
      socket.pause(); // never reads
      socket.write(
        `POST /test.Streaming/flood HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body}`,
      );
      await waitFor(() => probe.produced > 0);
      // the producer stops when the socket buffers (both kernels' and node's) are full: wait until it
      // has not moved for a while
      let seen = -1;
      await waitFor(
        () => {
          const now = probe.produced;
          const still = now === seen;
          seen = now;
          return still;
        },
        10_000,
        { intervalMs: 250, message: 'the producer never stopped' },
      );
      // socket buffers here hold a few MB at most (measured: about 4 MB, ~18,000 of these lines)
      expect(probe.produced).toBeLessThan(40_000);
      expect(probe.finallyRan).toBe(0);
    } finally {
      socket.destroy();
    }
    await waitFor(() => probe.finallyRan === 1, 5_000, { message: 'closing did not end the handler' });
  });

  it('refuses client and two-way streams with 400 naming the kind and pointing to the TCP protocol', async () => {
    const { base, probe } = await start();
    for (const [method, kind] of [
      ['sum', 'client'],
      ['echo', 'bidi'],
    ] as const) {
      const response = await postStream(`${base}/${method}`, ['x'], SSE);
      expect(response.status).toBe(400);
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('BadRequest');
      expect(body.error.message).toContain(`test.Streaming.${method} is a ${kind} stream`);
      expect(body.error.message).toContain("Callisto's protocol (TCP or TLS)");
    }
    expect(probe.produced).toBe(0);
  });

  it("applies the provider's auth: 401 JSON without the token (the handler never runs), the stream with it", async () => {
    const { base, probe } = await start({
      server: { auth: { tokens: { web: TOKEN }, defaultAccess: 'allow' } } as AppOptions['server'],
    });
    const refused = await postStream(`${base}/count`, [10, -1], SSE);
    expect(refused.status).toBe(401);
    expect(refused.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await refused.json()).toMatchObject({ error: { code: 'Unauthorized' } });
    expect(probe.produced).toBe(0);
    const allowed = await postStream(`${base}/count`, [10, -1], { ...SSE, authorization: `Bearer ${TOKEN}` });
    expect(allowed.status).toBe(200);
    const events = parseSse(await allowed.text());
    expect(events).toHaveLength(11);
    expect(events[10]!.event).toBe('end');
  });
});
