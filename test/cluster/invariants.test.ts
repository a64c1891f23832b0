/**
 * The cluster layer's promises, checked by a seeded simulation (FoundationDB's deterministic simulation,
 * Jepsen's checkers, in small): thousands of calls through every built-in strategy and balancer, over
 * the test kit's in-memory network, against providers that fail (error codes), stall (until the
 * deadline), run slower than the deadline (a handler that has already executed when the caller gives
 * up), die and come back, go silent (a partition: held, delivered at heal), on a schedule drawn from
 * one seed. After each run it asserts:
 *
 * - no non-idempotent call executed twice (executions counted per call id in the handlers; broadcast:
 *   never twice on one provider, by design once on each);
 * - no call left pending past its deadline (plus slack);
 * - no call answered with another call's result (each answer carries the request's unique argument);
 * - no state left after close: no connection in the pool, no directory, no listener on the network, no
 *   timer (failback's retries included).
 *
 * The seed is printed when an invariant breaks; `CALLISTO_SIM_SEED=<seed>` replays it (the seed fixes the
 * fault schedule and each call's behaviour on each provider; timers still interleave as they will).
 * `CALLISTO_SIM_CALLS` changes the calls per run (default 160).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { forking } from '../../src/cluster/forking.js';
import type { ClusterFactory } from '../../src/extend.js';
import { type CallistoApp, ConfigError, defineService, type LoadBalancerName } from '../../src/index.js';
import { BUILTIN_LOAD_BALANCERS } from '../../src/loadbalance/index.js';
import { createTestKit, type TestKit, type TestProvider } from '../../src/testing/index.js';
import { resourceCounts } from '../support/apps.js';
import { seededRandom } from '../support/seeded-random.js';
import { waitFor } from '../support/wait-for.js';

interface Ledger {
  read(id: string): Promise<string>;
  write(id: string): Promise<string>;
}

const LedgerDef = defineService<Ledger>('sim.Ledger', {
  methods: { read: { idempotent: true }, write: {} },
});

const STRATEGIES = [
  'failover',
  'failfast',
  'failsafe',
  'failback',
  'forking',
  'hedging',
  'broadcast',
] as const;
const BALANCERS = Object.keys(BUILTIN_LOAD_BALANCERS) as LoadBalancerName[];
const PROVIDERS = 3;
const TIMEOUT_MS = 300;
/** How late a call may settle after its deadline on a loaded machine (timers, event-loop lag). */
const SLACK_MS = 1_000;
const CALLS = Number(process.env.CALLISTO_SIM_CALLS ?? 160);
const LOAD_MS = 1_000;
const FAILBACK_DELAY_MS = 40;
const FAILBACK_ATTEMPTS = 2;
const SEED = process.env.CALLISTO_SIM_SEED
  ? Number(process.env.CALLISTO_SIM_SEED)
  : Math.floor(Math.random() * 2 ** 31);

/** A draw in [0, 1) fixed by the seed and the names given (independent of the order calls arrive in). */
function drawFor(...names: string[]): number {
  let h = SEED ^ 0x9e3779b9;
  for (const name of names) {
    for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193);
  }
  return seededRandom(h)();
}

/** What ran where: executions per call id, with the provider that ran it. */
type Executions = Map<string, string[]>;

function ledgerOf(name: string, executions: Executions): Ledger {
  const run = async (method: string, id: string): Promise<string> => {
    const list = executions.get(id) ?? [];
    list.push(name);
    executions.set(id, list);
    // One call in six runs longer than its caller waits: it has executed when the caller gives up.
    const draw = drawFor(id, name, method);
    if (draw < 1 / 6) await new Promise((resolve) => setTimeout(resolve, TIMEOUT_MS * (0.5 + draw * 6)));
    else if (draw < 1 / 3) await new Promise((resolve) => setTimeout(resolve, draw * 60));
    return `${name}:${id}`;
  };
  return { read: (id) => run('read', id), write: (id) => run('write', id) };
}

interface Outcome {
  readonly id: string;
  readonly method: 'read' | 'write';
  readonly tookMs: number;
  readonly value?: unknown;
  readonly error?: { code: string; message: string };
}

/** One step of a provider's fault schedule. */
type Step = (provider: TestProvider) => Promise<unknown> | unknown;

const CODES = ['Overloaded', 'Internal', 'Timeout', 'ProviderError', 'Shutdown', 'RateLimited'] as const;

/** A provider's fault schedule over the run: at each time, one step, drawn from the seed. */
function scheduleFor(run: string, provider: string): Array<{ atMs: number; step: Step; label: string }> {
  const random = seededRandom(Math.floor(drawFor(run, provider) * 2 ** 31));
  const steps: Array<{ atMs: number; step: Step; label: string }> = [];
  let at = random() * 100;
  while (at < LOAD_MS) {
    const kind = random();
    const method = random() < 0.3 ? '*' : random() < 0.5 ? 'read' : 'write';
    if (kind < 0.25) {
      const code = CODES[Math.floor(random() * CODES.length)]!;
      const times = 1 + Math.floor(random() * 6);
      steps.push({
        atMs: at,
        step: (p) => p.fail(method, code, { times }),
        label: `fail ${method} ${code}×${times}`,
      });
    } else if (kind < 0.37) {
      const times = 1 + Math.floor(random() * 4);
      steps.push({
        atMs: at,
        step: (p) => p.delay(method, 'forever', { times }),
        label: `stall ${method}×${times}`,
      });
    } else if (kind < 0.5) {
      const ms = Math.floor(random() * TIMEOUT_MS * 1.5);
      const times = 1 + Math.floor(random() * 6);
      steps.push({
        atMs: at,
        step: (p) => p.delay(method, ms, { times }),
        label: `delay ${method} ${ms}ms×${times}`,
      });
    } else if (kind < 0.65) {
      const downFor = 50 + random() * 250;
      steps.push({ atMs: at, step: (p) => p.down(), label: 'down' });
      steps.push({ atMs: at + downFor, step: (p) => p.up(), label: 'up' });
      at += downFor;
    } else if (kind < 0.8) {
      const silentFor = 50 + random() * 300;
      steps.push({ atMs: at, step: (p) => p.silence(), label: 'silence' });
      steps.push({ atMs: at + silentFor, step: (p) => p.speak(), label: 'speak' });
      at += silentFor;
    } else {
      steps.push({ atMs: at, step: (p) => p.heal(), label: 'heal' });
    }
    at += 50 + random() * 200;
  }
  return steps;
}

declare module '../../src/index.js' {
  interface ClusterNames {
    'forking-unmarked': true;
  }
}

/** forking under another name, without its `idempotentOnly` mark: its own guard must hold. */
const unmarkedForking: ClusterFactory = (context) => forking(context);

interface RunResult {
  readonly outcomes: Outcome[];
  readonly executions: Executions;
  readonly leftovers: string[];
  readonly schedule: string[];
}

async function simulate(
  strategy: (typeof STRATEGIES)[number],
  balancer: LoadBalancerName,
): Promise<RunResult> {
  const run = `${strategy}/${balancer}`;
  const executions: Executions = new Map();
  const kit: TestKit = createTestKit({ shutdownTimeoutMs: 2_000 });
  const providers: TestProvider[] = [];
  for (let i = 0; i < PROVIDERS; i++) {
    const name = `p${i}`;
    providers.push(await kit.provider(LedgerDef, ledgerOf(name, executions), { name }));
  }
  const consumer: CallistoApp = await kit.consumer({
    extend: (extensions) => extensions.register('cluster', 'forking-unmarked', unmarkedForking),
    consumer: {
      loadbalance: balancer,
      timeoutMs: TIMEOUT_MS,
      failbackDelayMs: FAILBACK_DELAY_MS,
      failbackAttempts: FAILBACK_ATTEMPTS,
      forks: 2,
      // hedging: a second attempt after 20 ms, for up to half of the calls (read only by hedging)
      hedgeDelayMs: 20,
      hedgeBudgetRatio: 0.5,
      ejectionMs: 200,
      // suspicion of a silent link within the deadline (default 1000 ms, here the deadline is 300 ms)
      suspectAfterMs: 100,
    },
  });
  const ref = consumer.refer(
    LedgerDef,
    strategy === 'forking'
      ? { cluster: 'forking', methods: { write: { cluster: 'forking-unmarked' } } }
      : { cluster: strategy },
  );
  await ref.read('warm-up').catch(() => undefined);

  const schedule: string[] = [];
  const outcomes: Outcome[] = [];
  const calls: Promise<void>[] = [];
  const started = Date.now();
  const timers = providers.flatMap((provider) =>
    scheduleFor(run, provider.name).map(({ atMs, step, label }) =>
      setTimeout(() => {
        schedule.push(`${Math.round(Date.now() - started)}ms ${provider.name} ${label}`);
        void Promise.resolve(step(provider)).catch(() => undefined);
      }, atMs),
    ),
  );
  for (let n = 0; n < CALLS; n++) {
    const id = `${run}#${n}`;
    const method = drawFor(id, 'method') < 0.5 ? 'read' : 'write';
    const begun = Date.now();
    calls.push(
      ref[method](id).then(
        (value) => {
          outcomes.push({ id, method, tookMs: Date.now() - begun, value });
        },
        (error: { code: string; message: string }) => {
          outcomes.push({
            id,
            method,
            tookMs: Date.now() - begun,
            error: { code: error.code, message: error.message },
          });
        },
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, LOAD_MS / CALLS));
  }
  await Promise.all(calls);
  for (const timer of timers) clearTimeout(timer);
  for (const provider of providers) {
    await provider.up();
    provider.speak().heal();
  }
  if (strategy === 'failback') {
    // the background retries of the last failures: the time in which a second execution would show
    await new Promise((resolve) =>
      setTimeout(resolve, FAILBACK_DELAY_MS * 2 ** FAILBACK_ATTEMPTS + TIMEOUT_MS * 2),
    );
  }
  const { consumer: side } = appInternals(consumer);
  await kit.close();
  const leftovers: string[] = [];
  const connections = side.pool.connections().length;
  if (connections > 0) leftovers.push(`${connections} connections in the pool`);
  if (side.directories().size > 0) leftovers.push(`${side.directories().size} directories`);
  if (kit.network.listeners > 0) leftovers.push(`${kit.network.listeners} listeners on the network`);
  return { outcomes, executions, leftovers, schedule };
}

/** The invariants of one run; an empty list when every one holds. */
function violations(strategy: string, result: RunResult): string[] {
  const broken: string[] = [];
  for (const outcome of result.outcomes) {
    if (outcome.tookMs > TIMEOUT_MS + SLACK_MS) {
      broken.push(`${outcome.id} settled after ${outcome.tookMs} ms (deadline ${TIMEOUT_MS} ms)`);
    }
    if (outcome.error !== undefined) continue;
    const answers = strategy === 'broadcast' ? (outcome.value as unknown[]) : [outcome.value];
    if (!Array.isArray(answers)) {
      broken.push(`${outcome.id} answered ${JSON.stringify(outcome.value)}`);
      continue;
    }
    for (const answer of answers) {
      if (answer === undefined && (strategy === 'failsafe' || strategy === 'failback')) continue;
      if (typeof answer !== 'string' || !answer.endsWith(`:${outcome.id}`)) {
        broken.push(`${outcome.id} answered another call's result: ${JSON.stringify(answer)}`);
      }
    }
  }
  for (const [id, ranOn] of result.executions) {
    if (!id.includes('#') || result.outcomes.find((o) => o.id === id)?.method !== 'write') continue;
    const twice =
      strategy === 'broadcast' ? ranOn.filter((name, i) => ranOn.indexOf(name) !== i) : ranOn.slice(1);
    if (twice.length > 0)
      broken.push(`non-idempotent ${id} executed ${ranOn.length} times (on ${ranOn.join(', ')})`);
  }
  if (result.outcomes.length !== CALLS) broken.push(`${CALLS - result.outcomes.length} calls never settled`);
  broken.push(...result.leftovers.map((leftover) => `left after close: ${leftover}`));
  return broken;
}

const totals = { calls: 0, runs: 0, failed: 0, writes: 0, executedWrites: 0, slowestMs: 0 };
afterAll(() => {
  console.log(
    `[invariants] seed ${SEED}: ${totals.runs} runs, ${totals.calls} calls (${totals.failed} failed as the faults meant), ` +
      `${totals.executedWrites} of ${totals.writes} writes executed, slowest call ${totals.slowestMs} ms ` +
      `(deadline ${TIMEOUT_MS} ms + ${SLACK_MS} ms slack); replay with CALLISTO_SIM_SEED=${SEED}`,
  );
});

describe(`cluster invariants, seeded simulation (seed ${SEED})`, () => {
  it('refuses forking for a non-idempotent method at refer()', async () => {
    const kit = createTestKit();
    try {
      await kit.provider(LedgerDef, ledgerOf('p0', new Map()));
      const consumer = await kit.consumer();
      expect(() => consumer.refer(LedgerDef, { cluster: 'forking' })).toThrow(ConfigError);
    } finally {
      await kit.close();
    }
  });

  for (const strategy of STRATEGIES) {
    it(`${strategy}: every balancer keeps every promise under random faults`, async () => {
      const timersBefore = resourceCounts().Timeout ?? 0;
      const results = await Promise.all(BALANCERS.map((balancer) => simulate(strategy, balancer)));
      const report: string[] = [];
      results.forEach((result, i) => {
        totals.runs++;
        totals.calls += result.outcomes.length;
        totals.failed += result.outcomes.filter((o) => o.error !== undefined).length;
        for (const outcome of result.outcomes) totals.slowestMs = Math.max(totals.slowestMs, outcome.tookMs);
        const writes = result.outcomes.filter((o) => o.method === 'write');
        totals.writes += writes.length;
        totals.executedWrites += writes.filter((o) => result.executions.has(o.id)).length;
        const broken = violations(strategy, result);
        if (broken.length > 0) {
          report.push(
            `${strategy}/${BALANCERS[i]}: ${broken.length} broken: ${broken.slice(0, 5).join('; ')}` +
              ` — schedule: ${result.schedule.slice(0, 12).join(', ')}`,
          );
        }
      });
      // no timer left behind (failback's background retries, deadlines, reconnects)
      await waitFor(() => (resourceCounts().Timeout ?? 0) <= timersBefore, 5_000).catch(() =>
        report.push(`${(resourceCounts().Timeout ?? 0) - timersBefore} timers left after close`),
      );
      if (report.length > 0) {
        const message = `seed ${SEED} (replay: CALLISTO_SIM_SEED=${SEED}):\n${report.join('\n')}`;
        console.error(`[invariants] ${message}`);
        expect.fail(message);
      }
    }, 30_000);
  }
});
