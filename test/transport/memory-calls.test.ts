/**
 * Apps talking over the `memory` transport: no socket is opened, yet the bytes go through the frame
 * codec, so its limits hold as over TCP (an oversized frame, a frame that never completes, a silent
 * peer, a consumer that stops reading); providers announce the transport in their records, and a
 * consumer following a registry connects with it.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { defineService } from '../../src/index.js';
import { FrameKind, HEADER_BYTES } from '../../src/protocol/frame.js';
import { validateProviderRecord } from '../../src/registry/record-validation.js';
import { createMemoryTransport } from '../../src/transport/memory.js';
import { FlakyDef, FlakyImpl } from '../fixtures/flaky-service.js';
import { UserServiceDef, UserServiceImpl } from '../fixtures/user-service.js';
import { closeAll, resourceCounts, testApp } from '../support/apps.js';
import { rawFrameSocket } from '../support/raw-frames.js';
import { waitFor } from '../support/wait-for.js';

const dirs: string[] = [];
afterEach(async () => {
  await closeAll();
  for (const dir of dirs.splice(0)) fs.rmSync(dir, { recursive: true, force: true });
});

const memory = createMemoryTransport();
const sockets = () => {
  const counts = resourceCounts();
  return (counts.TCPSocketWrap ?? 0) + (counts.TCPServerWrap ?? 0);
};

async function memoryProvider(options: Parameters<typeof testApp>[0] = {}) {
  const provider = await testApp({ ...options, server: { transport: 'memory', ...options.server } });
  provider.provide(UserServiceDef, new UserServiceImpl());
  await provider.start();
  return provider;
}

describe('calls over the memory transport', () => {
  it('serves typed calls, errors and timeouts without opening a socket', async () => {
    const before = sockets();
    const provider = await memoryProvider();
    expect(provider.address).toMatch(/^memory:\/\/127\.0\.0\.1:\d+$/);
    const consumer = await testApp();
    const users = consumer.refer(UserServiceDef, { url: provider.address! });
    expect(await users.getUser(7)).toMatchObject({ id: 7, createdAt: new Date(1_700_000_000_007) });
    const results = await Promise.all(Array.from({ length: 500 }, (_, i) => users.say(`m${i}`)));
    expect(results[499]).toBe('hello m499');
    await expect(users.withdraw(5)).rejects.toMatchObject({
      code: 'ProviderError',
      name: 'InsufficientFundsError',
      details: { balance: 10, requested: 5 },
    });
    await expect(users.register('x', -1)).rejects.toMatchObject({ code: 'BadRequest' });
    expect(sockets()).toBe(before);
  });

  it('announces the transport in the registry record; a consumer following the registry connects with it', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-memory-'));
    dirs.push(dir);
    const registry = `file://${dir}`;
    const impl = new FlakyImpl('mem');
    const provider = await testApp({ registry, server: { transport: 'memory' } });
    provider.provide(FlakyDef, impl);
    await provider.start();
    const file = fs
      .readdirSync(dir, { recursive: true, encoding: 'utf8' })
      .find((name) => name.includes('providers') && name.endsWith('.json'))!;
    expect(JSON.parse(fs.readFileSync(path.join(dir, file), 'utf8'))).toMatchObject({ transport: 'memory' });
    const consumer = await testApp({ registry, consumer: { snapshotDir: '' } });
    const ref = consumer.refer(FlakyDef);
    expect(await ref.read('a')).toBe('mem:a');
  });

  it('closes a connection announcing an oversized frame, and serves the others', async () => {
    const provider = await memoryProvider({ server: { maxFrameBytes: 64 * 1024 } });
    const consumer = await testApp();
    const users = consumer.refer(UserServiceDef, { url: provider.address! });
    expect(await users.say('before')).toBe('hello before');
    const raw = await rawFrameSocket(provider.address!, memory);
    const header = Buffer.alloc(HEADER_BYTES);
    header.set([0xca, 0x11, 1, FrameKind.Request, 0, 2, 0, 0]);
    header.writeUInt32BE(1 << 30, 16);
    raw.socket.write(header);
    await expect(raw.until(() => false)).rejects.toThrow(/closed/);
    expect(await users.say('after')).toBe('hello after');
  });

  it('closes a connection whose frame does not complete within frameTimeoutMs', async () => {
    const provider = await memoryProvider({ frameTimeoutMs: 300 });
    const raw = await rawFrameSocket(provider.address!, memory);
    const header = Buffer.alloc(HEADER_BYTES);
    header.set([0xca, 0x11, 1, FrameKind.Request, 0, 2, 0, 0]);
    header.writeUInt32BE(100, 16); // 100 body bytes announced, none sent
    const started = Date.now();
    raw.socket.write(header);
    await expect(raw.until(() => false)).rejects.toThrow(/closed/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
  });

  it('pings a silent peer and closes it after three heartbeat intervals', async () => {
    const provider = await memoryProvider({ heartbeatIntervalMs: 100 });
    const raw = await rawFrameSocket(provider.address!, memory);
    const started = Date.now();
    await expect(raw.until(() => false)).rejects.toThrow(/closed/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(raw.frames.some((frame) => frame.kind === FrameKind.Heartbeat)).toBe(true);
  });

  it('stops reading from a consumer that does not read its answers, and resumes when it reads', async () => {
    const Big = defineService<{ big(bytes: number): Promise<string> }>('test.MemBig', {
      methods: { big: {} },
    });
    let executed = 0;
    const provider = await testApp({ server: { transport: 'memory', writeHighWaterBytes: 1024 * 1024 } });
    provider.provide(Big, {
      big: (bytes) => {
        executed++;
        return 'x'.repeat(bytes);
      },
    });
    await provider.start();
    const raw = await rawFrameSocket(provider.address!, memory);
    raw.socket.pause();
    for (let id = 1; id <= 8; id++) raw.request(id, 'test.MemBig', 'big', [1024 * 1024]);
    await waitFor(() => executed === 8);
    for (let id = 9; id <= 16; id++) raw.request(id, 'test.MemBig', 'big', [1024 * 1024]);
    // many turns of the event loop in which the provider could have read the next requests
    for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(executed).toBe(8);
    raw.socket.resume();
    await raw.until((frame) => frame.kind === FrameKind.Response && frame.requestId === 16);
    expect(executed).toBe(16);
    raw.close();
  });
});

describe('transport names', () => {
  it('fails at once on a transport that is not registered, in the config or in a url', async () => {
    await expect(testApp({ server: { transport: 'memroy' as never } })).rejects.toThrow(
      /server\.transport = "memroy".*registered transport names: tcp, memory.*did you mean "memory"/,
    );
    const app = await testApp();
    expect(() => app.refer(FlakyDef, { url: 'memroy://127.0.0.1:1' })).toThrow(
      /refer\(test\.Flaky\)\.url = "memroy:\/\/127\.0\.0\.1:1".*unknown transport "memroy".*did you mean "memory:\/\/127\.0\.0\.1:1"/,
    );
  });

  it('keeps a record transport name, leaves tcp implicit, and skips a record with a bad one', () => {
    const record = { service: 's', host: 'h', port: 1 };
    expect(validateProviderRecord({ ...record, transport: 'memory' }, 1).record?.transport).toBe('memory');
    expect(validateProviderRecord({ ...record, transport: 'tcp' }, 1).record).not.toHaveProperty('transport');
    expect(validateProviderRecord({ ...record, transport: 'No Such' }, 1).problem).toMatch(
      /transport "No Such" is not a transport name/,
    );
  });
});
