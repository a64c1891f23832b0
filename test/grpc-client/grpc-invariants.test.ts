/**
 * "A non-idempotent call is never executed twice", over gRPC, for every cluster strategy that may
 * repeat a call (failover, failfast, failsafe, failback), under a seeded mix of faults: grpc-js
 * servers that switch between answering, UNAVAILABLE before running, UNAVAILABLE or INTERNAL after
 * running; a server that refuses every stream (REFUSED_STREAM) and an address nothing listens on.
 * Every call has its own name; the servers record the names they ran. The seed is printed on failure.
 */
import * as grpc from '@grpc/grpc-js';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, testApp } from '../support/apps.js';
import { seededRandom } from '../support/seeded-random.js';
import { waitFor } from '../support/wait-for.js';
import {
  closeFaultServers,
  closeServers,
  faultServer,
  Greeter,
  type GreeterServer,
  greeterServer,
} from './support.js';

afterEach(async () => {
  await closeAll();
  await closeServers();
  await closeFaultServers();
});

type Mode = 'ok' | 'unavailable-before' | 'unavailable-after' | 'internal-after';
const MODES: readonly Mode[] = ['ok', 'unavailable-before', 'unavailable-after', 'internal-after'];

function setMode(server: GreeterServer, mode: Mode): void {
  if (mode === 'ok') delete server.refuseWith['say'];
  else if (mode === 'unavailable-before') server.refuseWith['say'] = { code: grpc.status.UNAVAILABLE };
  else if (mode === 'unavailable-after')
    server.refuseWith['say'] = { code: grpc.status.UNAVAILABLE, afterRunning: true };
  else server.refuseWith['say'] = { code: grpc.status.INTERNAL, afterRunning: true };
}

const STRATEGIES = ['failover', 'failfast', 'failsafe', 'failback'] as const;
const SEEDS = [1, 2, 3];

describe('gRPC consumer: a non-idempotent call never runs twice', () => {
  for (const cluster of STRATEGIES) {
    for (const seed of SEEDS) {
      it(`${cluster}, seed ${seed}`, async () => {
        const random = seededRandom(seed * 7919 + cluster.length);
        const a = await greeterServer({ name: 'a' });
        const b = await greeterServer({ name: 'b' });
        const refusing = await faultServer('refuse-stream');
        const gone = await greeterServer({ name: 'gone' });
        await gone.close();
        const consumer = await testApp({
          consumer: {
            cluster,
            retries: 3,
            loadbalance: 'random',
            failbackDelayMs: 20,
            failbackAttempts: 3,
          },
        });
        const greeter = consumer.refer(Greeter, {
          url: [a.url, b.url, refusing.url, `grpc://127.0.0.1:${gone.port}`],
        });
        const names: string[] = [];
        for (let i = 0; i < 40; i++) {
          setMode(a, MODES[Math.floor(random() * MODES.length)]!);
          setMode(b, MODES[Math.floor(random() * MODES.length)]!);
          const name = `s${seed}-${i}`;
          names.push(name);
          await greeter.say(name).catch(() => undefined);
        }
        setMode(a, 'ok');
        setMode(b, 'ok');
        // failback retries in the background: wait until nothing more runs
        let last = -1;
        await waitFor(
          () => {
            const now = a.seen.ran.length + b.seen.ran.length;
            const steady = now === last;
            last = now;
            return steady;
          },
          10_000,
          { intervalMs: 300 },
        );
        const ran = [...a.seen.ran, ...b.seen.ran];
        const twice = ran.filter((name, i) => ran.indexOf(name) !== i);
        expect(twice, `seed ${seed}, ${cluster}: ran twice`).toEqual([]);
        expect(ran.every((name) => names.includes(name))).toBe(true);
        // the faults that prove nothing ran let calls through elsewhere: some calls did run
        expect(ran.length).toBeGreaterThan(0);
      });
    }
  }
});
