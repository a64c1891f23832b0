/**
 * A Callisto consumer calling a Callisto provider over gRPC (`grpc://` to the provider's own port):
 * unary calls, every error code kept exactly (the `callisto-code` trailer, which only counts when it
 * agrees with the gRPC status), and the three stream kinds. The entry and the consumer are tested
 * against implementations nobody here wrote elsewhere (test/grpc, test/grpc-client); this checks that
 * the two halves agree with each other.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode, type ErrorCodeName, RpcError } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { GreeterDef, greeterImpl, newSeen } from './greeter.js';

afterEach(closeAll);

async function pair() {
  const provider = await testApp({ application: 'greeter' });
  provider.provide(GreeterDef, greeterImpl(newSeen()));
  await provider.start();
  const consumer = await testApp({ application: 'caller' });
  const ref = consumer.refer(GreeterDef, { url: `grpc://127.0.0.1:${provider.grpcPort}`, retries: 0 });
  return { provider, ref };
}

async function* numbers(values: number[]) {
  for (const value of values) yield value;
}

describe('Callisto consumer → Callisto provider over gRPC', () => {
  it('answers unary calls', async () => {
    const { ref } = await pair();
    expect(await ref.sayHello('ada')).toEqual({ message: 'hello ada' });
  });

  it('keeps every error code exactly', async () => {
    const { ref } = await pair();
    for (const code of Object.keys(ErrorCode) as ErrorCodeName[]) {
      const error = await ref.fail(code).then(
        () => undefined,
        (failure: unknown) => failure,
      );
      expect(RpcError.is(error), code).toBe(true);
      expect((error as RpcError).code, code).toBe(code);
      expect((error as RpcError).remote, code).toBe(true);
    }
  });

  it('carries server, client and two-way streams', async () => {
    const { ref } = await pair();
    const counted: number[] = [];
    for await (const value of ref.countTo(200, 0)) counted.push(value);
    expect(counted).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(await ref.sum(numbers([1, 2, 3, 4]))).toEqual({ total: 10 });
    const echoed: number[] = [];
    for await (const value of ref.echo(numbers([1, 2, 3]))) echoed.push(value);
    expect(echoed).toEqual([10, 20, 30]);
  });
});
