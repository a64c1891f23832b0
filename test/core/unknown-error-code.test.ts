/**
 * An RpcError thrown with a code outside the set (plain JavaScript, or a cast) travels as `Internal`,
 * over the wire and in-process, for a unary call and mid-stream: never as status 0, which the caller
 * would read as a success (a unary call answered with the error's payload as its result, a stream
 * ending cleanly).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { defineService, RpcError } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

interface Odd {
  one(): Promise<string>;
  many(): AsyncIterable<number>;
}
const OddDef = defineService<Odd>('test.Odd', { methods: { one: {}, many: { stream: 'server' } } });

const unknownCode = () => new RpcError('Unavailable' as never, 'no such code');

describe('an RpcError with an unknown code', () => {
  it('fails the call with Internal, over TCP and in-process, unary and mid-stream', async () => {
    const provider = await testApp({ server: { port: 0 } });
    provider.provide(OddDef, {
      async one() {
        throw unknownCode();
      },
      async *many() {
        yield 1;
        throw unknownCode();
      },
    });
    await provider.start();
    const consumer = await testApp();
    for (const ref of [
      consumer.refer(OddDef, { url: provider.address!, retries: 0 }),
      provider.refer(OddDef, { retries: 0 }),
    ]) {
      const unary = await ref.one().then(
        (value) => ({ value }),
        (error: unknown) => ({ error }),
      );
      expect(unary).toMatchObject({
        error: { code: 'Internal', message: expect.stringContaining('no such code') },
      });
      const seen: number[] = [];
      let failure: unknown;
      try {
        for await (const n of ref.many()) seen.push(n);
      } catch (error) {
        failure = error;
      }
      expect(seen).toEqual([1]);
      expect(RpcError.is(failure) && failure.code).toBe('Internal');
    }
  });
});
