import dns from 'node:dns/promises';
import fs from 'node:fs/promises';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  fromErrorPayload,
  isDeclaredError,
  isSystemError,
  toErrorPayload,
} from '../../src/core/error-payload.js';
import { RpcError } from '../../src/core/rpc-error.js';

async function caught(work: () => Promise<unknown>): Promise<Error> {
  return work().then(
    () => {
      throw new Error('expected a failure');
    },
    (error: Error) => error,
  );
}

describe('system errors', () => {
  it('recognises fs, net and dns errors, and not business errors that happen to have a code', async () => {
    expect(isSystemError(await caught(() => fs.readFile('/nonexistent/x')))).toBe(true);
    const refused = await caught(
      () =>
        new Promise((resolve, reject) => {
          const socket = net.connect({ host: '127.0.0.1', port: 1 });
          socket.once('error', reject);
          socket.once('connect', resolve);
        }),
    );
    expect(isSystemError(refused)).toBe(true);
    expect(isSystemError(await caught(() => dns.lookup('nonexistent.invalid')))).toBe(true);
    const business = Object.assign(new Error('card expired'), { code: 'EXPIRED' });
    expect(isSystemError(business)).toBe(false);
    expect(isSystemError('ENOENT')).toBe(false);
  });

  it('scrubs a system error unless it is declared or everything is exposed', async () => {
    const error = await caught(() => fs.readFile('/srv/secret/file'));
    const scrubbed = toErrorPayload(error, {
      exposeStack: false,
      exposure: 'declared',
      declared: [],
      label: 'x.y',
    });
    expect(JSON.stringify(scrubbed.payload)).not.toContain('/srv/secret');
    expect(scrubbed.scrubbed?.error).toBe(error);
    expect(scrubbed.payload.message).toContain(`ref ${scrubbed.scrubbed!.ref}`);
    const all = toErrorPayload(error, { exposeStack: false, exposure: 'all', declared: [] });
    expect(all.payload.details).toMatchObject({ code: 'ENOENT', path: '/srv/secret/file' });
    expect(all.scrubbed).toBeUndefined();
  });
});

describe('declared errors', () => {
  class OutOfStock extends Error {
    override name = 'OutOfStock';
    left = 2;
  }
  it('match by class (subclasses too) and by name', () => {
    class Sub extends OutOfStock {}
    expect(isDeclaredError(new Sub(), [OutOfStock])).toBe(true);
    expect(isDeclaredError(new OutOfStock(), ['OutOfStock'])).toBe(true);
    expect(isDeclaredError(new Error('x'), [OutOfStock, 'OutOfStock'])).toBe(false);
  });

  it('carry their fields; other errors their name and message only; RpcErrors travel as they are', () => {
    const options = { exposeStack: false, exposure: 'declared' as const, declared: [OutOfStock] };
    expect(toErrorPayload(new OutOfStock('none'), options).payload).toEqual({
      name: 'OutOfStock',
      message: 'none',
      details: { left: 2 },
    });
    const other = Object.assign(new TypeError('bad'), { secret: 1 });
    expect(toErrorPayload(other, options).payload).toEqual({
      name: 'TypeError',
      message: 'bad',
      details: {},
    });
    const rpc = new RpcError('Unauthorized', 'no', { details: { realm: 'x' } });
    expect(toErrorPayload(rpc, options)).toMatchObject({ status: 9, payload: { details: { realm: 'x' } } });
  });

  it('rebuilds a caller-side error with details of its own (never a shared object)', () => {
    const { status, payload } = toErrorPayload(new TypeError('bad'));
    const first = fromErrorPayload(status, payload);
    first.details.mutated = true;
    expect(fromErrorPayload(status, payload).details).toEqual({});
  });
});
