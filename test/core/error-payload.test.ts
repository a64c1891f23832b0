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
import { RpcError, rpcErrorWithoutStack } from '../../src/core/rpc-error.js';
import { shedError } from '../../src/core/shed.js';

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

describe('errors made by the thousand under overload', () => {
  // their stack would show only the framework's own frames; capturing it was most of a refusal's cost
  const frames = (error: Error) => (error.stack ?? '').split('\n').filter((line) => /^\s+at /.test(line));

  it('a shed call and an error answer rebuilt from the wire carry no stack frames', () => {
    expect(frames(new RpcError('Overloaded', 'ordinary'))).not.toHaveLength(0);
    const shed = shedError('Overloaded', 'refused', 'limit');
    expect(shed).toMatchObject({ code: 'Overloaded', message: 'refused', details: { shed: 'limit' } });
    expect(frames(shed)).toEqual([]);
    const remote = fromErrorPayload(14, { name: 'Error', message: 'boom', details: {} });
    expect(remote).toMatchObject({ code: 'Internal', message: 'boom', remote: true });
    expect(frames(remote)).toEqual([]);
  });

  it('rpcErrorWithoutStack leaves Error.stackTraceLimit as it found it, even when the constructor throws', () => {
    const before = Error.stackTraceLimit;
    rpcErrorWithoutStack('Internal', 'x');
    expect(Error.stackTraceLimit).toBe(before);
    expect(() =>
      rpcErrorWithoutStack('Internal', 'x', {
        get details(): Record<string, unknown> {
          throw new Error('bad init');
        },
      }),
    ).toThrow('bad init');
    expect(Error.stackTraceLimit).toBe(before);
  });
});
