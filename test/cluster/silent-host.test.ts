/**
 * Silent hosts with the defaults: a provider whose link goes silent (a partition: the sockets stay open,
 * nothing gets through) must cost no failed idempotent call with the default consumer configuration —
 * the connection is suspected at its first missed heartbeat (`consumer.suspectAfterMs`, default 1 s): new
 * attempts avoid it and its waiting idempotent attempts are retried elsewhere within their deadline.
 * A non-idempotent call is never sent twice (one sent into the silence runs at most once, when it heals).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type Logger, RpcError } from '../../src/index.js';
import { FlakyDef } from '../fixtures/flaky-service.js';
import { closeAll, testApp } from '../support/apps.js';
import { flakyProviders } from '../support/cluster-setup.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { waitFor } from '../support/wait-for.js';

const proxies: TcpProxy[] = [];
afterEach(async () => {
  await closeAll();
  await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
});

function linesLogger(): { logger: Logger; lines: string[] } {
  const lines: string[] = [];
  const keep = (level: string) => (message: string) => lines.push(`${level}: ${message}`);
  return {
    logger: { debug: keep('debug'), info: keep('info'), warn: keep('warn'), error: keep('error') },
    lines,
  };
}

const tick = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a provider whose link goes silent, default consumer configuration', () => {
  it('fails no idempotent call and sends no non-idempotent call twice', async () => {
    const providers = await flakyProviders(2);
    const proxy = await startTcpProxy(providers[0]!.address);
    proxies.push(proxy);
    const log = linesLogger();
    const consumer = await testApp({ application: 'consumer', logger: log.logger, logLevel: 'info' });
    // Defaults only: 3 s deadline, 2 retries, 30 s heartbeat, no attempt cap.
    const ref = consumer.refer(FlakyDef, { url: [proxy.address, providers[1]!.address] });

    const readFailures: RpcError[] = [];
    const calls: Promise<unknown>[] = [];
    let n = 0;
    let readsDuringCut = 0;
    let cut = false;
    // 200 reads/s and 40 writes/s, paced by a timer (load, not synchronisation)
    const load = setInterval(() => {
      for (let i = 0; i < 2; i++) {
        const key = `r${n++}`;
        calls.push(
          ref.read(key).then(
            () => {
              if (cut) readsDuringCut++;
            },
            (error: unknown) => readFailures.push(RpcError.from(error)),
          ),
        );
      }
      if (n % 10 === 0) calls.push(ref.write(`w${n}`).catch(() => undefined));
    }, 10);
    try {
      await tick(1_500);
      proxy.silence();
      cut = true;
      await tick(3_500);
      cut = false;
      proxy.speak();
      await tick(1_000);
    } finally {
      clearInterval(load);
    }
    const started = Date.now();
    await Promise.all(calls);
    // every call settled within its deadline (3 s) of the end of the load
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(
      readFailures.length,
      `failed reads: ${readFailures
        .slice(0, 5)
        .map((e) => `${e.code}: ${e.message}`)
        .join(' | ')}`,
    ).toBe(0);
    expect(readsDuringCut).toBeGreaterThan(300);
    expect(log.lines.some((line) => /sent nothing for \d+ ms while calls waited.*suspected/.test(line))).toBe(
      true,
    );
    // no write ran twice, on one provider or across both
    const executed = new Map<string, number>();
    for (const provider of providers) {
      for (const key of provider.impl.writes) executed.set(key, (executed.get(key) ?? 0) + 1);
    }
    expect([...executed.values()].filter((count) => count > 1)).toEqual([]);
    // the healed link is heard again (the outlier detector may still hold the provider out a while)
    await waitFor(() => log.lines.some((line) => /no longer suspected/.test(line)), 5_000);
  }, 20_000);

  it('does not suspect a live provider whose handler runs longer than suspectAfterMs (its pings are answered)', async () => {
    const providers = await flakyProviders(1);
    providers[0]!.impl.mode = 'hang';
    const log = linesLogger();
    const consumer = await testApp({ application: 'consumer', logger: log.logger, logLevel: 'info' });
    const ref = consumer.refer(FlakyDef, { url: providers[0]!.address });
    const answer = ref.read('slow');
    setTimeout(() => providers[0]!.impl.releaseAll(), 2_500);
    expect(await answer).toBe('p0:slow');
    expect(providers[0]!.impl.reads).toBe(1);
    expect(log.lines.filter((line) => /suspected/.test(line))).toEqual([]);
  });
});
