/**
 * Callisto's cluster over gRPC servers: failover between two grpc-js servers when one is closed or
 * refuses connections; UNAVAILABLE before or after the server ran the call (an idempotent method is
 * retried, a non-idempotent one never runs twice, counted on the servers); `neverSent` only when
 * HTTP/2 proves it (REFUSED_STREAM, a GOAWAY below the stream's id: a non-idempotent call fails over;
 * a reset after the request arrived: it does not); outlier ejection; retries and attempts in the
 * consumer's metrics.
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { RpcError, withOptions } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import {
  closeFaultServers,
  closeServers,
  faultServer,
  Greeter,
  greeterServer,
  rawHttp2Server,
  rejection,
} from './support.js';

afterEach(async () => {
  await closeAll();
  await closeServers();
  await closeFaultServers();
});

/** A port nothing listens on (a server bound, then closed). */
async function deadPort(): Promise<number> {
  const server = await greeterServer({ name: 'gone' });
  await server.close();
  return server.port;
}

const sum = (counts: Record<string, number>, method: string) => counts[method] ?? 0;

describe('gRPC consumer: failover between grpc-js servers', () => {
  it('a closed server: every call goes to the other, non-idempotent ones included', async () => {
    const a = await greeterServer({ name: 'a' });
    const b = await greeterServer({ name: 'b' });
    const consumer = await testApp({ consumer: { loadbalance: 'roundrobin' } });
    const greeter = consumer.refer(Greeter, { url: [a.url, b.url], retries: 2 });
    for (let i = 0; i < 4; i++) await greeter.say(`warm ${i}`);
    expect(sum(a.seen.calls, 'say')).toBeGreaterThan(0);
    await a.close();
    for (let i = 0; i < 20; i++) expect(await greeter.say(`after ${i}`)).toBe(`hello after ${i} from b`);
  });

  it('a refusing address (nothing listening): calls fail over, each run once', async () => {
    const b = await greeterServer({ name: 'b' });
    const consumer = await testApp({ consumer: { loadbalance: 'roundrobin' } });
    const greeter = consumer.refer(Greeter, {
      url: [`grpc://127.0.0.1:${await deadPort()}`, b.url],
      retries: 2,
    });
    for (let i = 0; i < 20; i++) expect(await greeter.say(`n${i}`)).toBe(`hello n${i} from b`);
    expect(sum(b.seen.calls, 'say')).toBe(20);
  });

  it('UNAVAILABLE before running: an idempotent call is retried on the other server', async () => {
    const a = await greeterServer({ name: 'a' });
    const b = await greeterServer({ name: 'b' });
    a.refuseWith['getUser'] = { code: grpc.status.UNAVAILABLE };
    const consumer = await testApp({ consumer: { loadbalance: 'roundrobin', outlierDetection: false } });
    const greeter = consumer.refer(Greeter, { url: [a.url, b.url], retries: 2 });
    for (let i = 0; i < 10; i++) expect((await greeter.getUser(i)).name).toBe(`user ${i} of b`);
    expect(sum(b.seen.calls, 'getUser')).toBe(10);
    expect(sum(a.seen.calls, 'getUser')).toBe(0);
    // retries are counted in the consumer's metrics
    const metrics = await consumer.metrics();
    const retries = /callisto_retries_total\{[^}]*method="getUser"[^}]*\} (\d+)/.exec(metrics);
    expect(Number(retries?.[1])).toBeGreaterThan(0);
    expect(metrics).toMatch(new RegExp(`callisto_attempts_total\\{[^}]*peer="${a.url}"[^}]*code="Network"`));
  });

  it('UNAVAILABLE after running: idempotent retried (counted on both), non-idempotent never twice', async () => {
    const a = await greeterServer({ name: 'a' });
    const b = await greeterServer({ name: 'b' });
    a.refuseWith['getUser'] = { code: grpc.status.UNAVAILABLE, afterRunning: true };
    a.refuseWith['say'] = { code: grpc.status.UNAVAILABLE, afterRunning: true };
    const consumer = await testApp({ consumer: { loadbalance: 'roundrobin', outlierDetection: false } });
    const greeter = consumer.refer(Greeter, { url: [a.url, b.url], retries: 2 });
    for (let i = 0; i < 10; i++) await greeter.getUser(i);
    expect(sum(b.seen.calls, 'getUser')).toBe(10);
    expect(sum(a.seen.calls, 'getUser')).toBeGreaterThan(0); // ran there, then retried on b

    let failed = 0;
    for (let i = 0; i < 10; i++) {
      const outcome = await greeter.say(`s${i}`).then(
        () => undefined,
        (error: unknown) => error,
      );
      if (outcome !== undefined) {
        failed++;
        expect(RpcError.is(outcome) && outcome.code).toBe('Network');
      }
    }
    // every call ran exactly once, somewhere: the failed ones on a, the others on b
    expect(sum(a.seen.calls, 'say')).toBe(failed);
    expect(failed).toBeGreaterThan(0);
    expect(sum(a.seen.calls, 'say') + sum(b.seen.calls, 'say')).toBe(10);
  });

  it('REFUSED_STREAM proves a call never ran: a non-idempotent one fails over', async () => {
    const refusing = await faultServer('refuse-stream');
    const b = await greeterServer({ name: 'b' });
    const consumer = await testApp({ consumer: { loadbalance: 'roundrobin', outlierDetection: false } });
    const greeter = consumer.refer(Greeter, { url: [refusing.url, b.url], retries: 2 });
    for (let i = 0; i < 6; i++) expect(await greeter.say(`r${i}`)).toBe(`hello r${i} from b`);
    expect(refusing.streams()).toBeGreaterThan(0);
    expect(sum(b.seen.calls, 'say')).toBe(6);
  });

  it('a GOAWAY below the stream id proves it never ran: a non-idempotent call fails over', async () => {
    const leaving = await rawHttp2Server('goaway');
    const b = await greeterServer({ name: 'b' });
    const consumer = await testApp({ consumer: { loadbalance: 'roundrobin', outlierDetection: false } });
    const greeter = consumer.refer(Greeter, { url: [leaving.url, b.url], retries: 2 });
    for (let i = 0; i < 6; i++) expect(await greeter.say(`g${i}`)).toBe(`hello g${i} from b`);
    expect(leaving.streams()).toBeGreaterThan(0);
    expect(sum(b.seen.calls, 'say')).toBe(6);
  });

  it('a reset after the request arrived proves nothing: a non-idempotent call is not retried', async () => {
    const resetting = await faultServer('reset-internal');
    const consumer = await testApp({ consumer: { outlierDetection: false } });
    const greeter = consumer.refer(Greeter, { url: resetting.url, retries: 2 });
    const error = await rejection(greeter.say('once'));
    expect(RpcError.is(error) && error.code).toBe('Network');
    expect((error as RpcError).neverSent).toBe(false);
    expect(resetting.streams()).toBe(1);
  });

  it('suspects a silent server: a waiting idempotent call is retried elsewhere long before its deadline', async () => {
    const silent = await rawHttp2Server('silent');
    const b = await greeterServer({ name: 'b' });
    const consumer = await testApp({
      consumer: { loadbalance: 'roundrobin', outlierDetection: false, suspectAfterMs: 400 },
    });
    const greeter = consumer.refer(Greeter, { url: [silent.url, b.url], retries: 2 });
    const started = Date.now();
    const answers = await Promise.all(
      Array.from({ length: 4 }, (_, i) => withOptions(greeter, { timeoutMs: 20_000 }).getUser(i)),
    );
    expect(answers.map((user) => user.name)).toEqual([0, 1, 2, 3].map((i) => `user ${i} of b`));
    expect(silent.streams()).toBeGreaterThan(0);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it('ejects a failing server (outlier detection): calls stop going there', async () => {
    const a = await greeterServer({ name: 'a' });
    const b = await greeterServer({ name: 'b' });
    a.refuseWith['getUser'] = { code: grpc.status.INTERNAL, afterRunning: true };
    const consumer = await testApp({
      consumer: { loadbalance: 'roundrobin', ejectAfterFailures: 3, ejectionMs: 60_000 },
    });
    const greeter = consumer.refer(Greeter, { url: [a.url, b.url], retries: 2 });
    for (let i = 0; i < 40; i++) await greeter.getUser(i);
    const atEjection = sum(a.seen.calls, 'getUser');
    expect(atEjection).toBeGreaterThanOrEqual(3);
    expect(atEjection).toBeLessThan(10);
    for (let i = 0; i < 20; i++) await greeter.getUser(i);
    expect(sum(a.seen.calls, 'getUser')).toBe(atEjection);
    expect(sum(b.seen.calls, 'getUser')).toBe(60);
  });
});
