/**
 * A well-behaved client on its own connection (from 127.0.0.1): a Callisto consumer calling `echo(n)`
 * every 20 ms with the normal timeout (3000 ms) while a test attacks. `stop()` waits for every call it
 * made and reports how many succeeded with the right answer, failed, and the slowest.
 */
import type { AppOptions, CallistoApp } from '../../../src/index.js';
import { testApp } from '../../support/apps.js';
import { TargetDef } from '../fixtures/target-service.js';

export interface WellBehavedStats {
  ok: number;
  failed: number;
  wrong: number;
  slowestMs: number;
  errors: string[];
}

export interface WellBehaved {
  /** Resolves after the next successful call (the client is served). */
  served(): Promise<void>;
  stop(): Promise<WellBehavedStats>;
}

/** `options`: more app options (e.g. `consumer.tls` for a TLS target). */
export async function startWellBehaved(address: string, options: AppOptions = {}): Promise<WellBehaved> {
  const app: CallistoApp = await testApp({ application: 'well-behaved', ...options });
  const ref = app.refer(TargetDef, { url: address, cluster: 'failfast', timeoutMs: 3_000 });
  await ref.echo(0); // connected and answered before the attack starts
  const stats: WellBehavedStats = { ok: 0, failed: 0, wrong: 0, slowestMs: 0, errors: [] };
  const calls: Promise<void>[] = [];
  const waiters: Array<() => void> = [];
  let n = 0;
  const call = (): void => {
    const value = ++n;
    const started = performance.now();
    calls.push(
      ref.echo(value).then(
        (answer) => {
          stats.slowestMs = Math.max(stats.slowestMs, performance.now() - started);
          if (answer === value) stats.ok++;
          else stats.wrong++;
          for (const wake of waiters.splice(0)) wake();
        },
        (error: unknown) => {
          stats.failed++;
          if (stats.errors.length < 5) stats.errors.push((error as Error).message);
        },
      ),
    );
  };
  const timer = setInterval(call, 20);
  return {
    served: () => new Promise<void>((resolve) => waiters.push(resolve)),
    async stop() {
      clearInterval(timer);
      call();
      await Promise.all(calls);
      return stats;
    },
  };
}
