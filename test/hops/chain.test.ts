/**
 * Context across hops (docs/cluster.md), over real sockets between three processes: A → B → C, each a
 * child process serving hops.Hop and calling the next (test/hops/fixtures/hop-node.ts); this process
 * only drives A and reads the probes.
 *
 * - A's 300 ms deadline reaches C as what remains of it;
 * - A cancelling its call cancels B's and C's handlers (their signals abort);
 * - a tag and baggage set in A arrive at C's call (an attachment A sets that is not inherited does not);
 * - one trace id in all three processes' logs without an OpenTelemetry SDK, with the call id on every
 *   line (the methods' own lines, after an await too, and the access log);
 * - a failure in C is retried by one layer only (B's), and not at all below a retry.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallistoApp, type Remote, RpcError, withOptions } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { type Hop, HopDef } from './fixtures/hop-service.js';
import { type HopProcess, killHops, startHop } from './support/hop-process.js';

let a: HopProcess;
let b: HopProcess;
let c: HopProcess;
let driver: CallistoApp;
let toA: Remote<Hop>;
let toB: Remote<Hop>;
let toC: Remote<Hop>;

beforeAll(async () => {
  c = await startHop('c');
  b = await startHop('b', { HOP_NEXT: c.address });
  a = await startHop('a', { HOP_NEXT: b.address, HOP_LAST: c.address });
  driver = await testApp({ application: 'hop-driver' });
  // the driver retries nothing itself: what is counted is A's and B's retries
  toA = driver.refer(HopDef, { url: a.address, retries: 0, timeoutMs: 20_000 });
  toB = driver.refer(HopDef, { url: b.address });
  toC = driver.refer(HopDef, { url: c.address });
});

afterAll(async () => {
  await closeAll();
  await killHops();
});

async function resetAll(): Promise<void> {
  await Promise.all([toA.reset(), toB.reset(), toC.reset()]);
}

/** The value of `key=` on `line`. */
function field(line: string, key: string): string | undefined {
  return new RegExp(`\\b${key}=(\\S+)`).exec(line)?.[1];
}

function linesWith(log: string, text: string): string[] {
  return log.split('\n').filter((line) => line.includes(text));
}

describe('context across hops: A → B → C over TCP', () => {
  it("A's 300 ms deadline reaches B and C as what remains of it", async () => {
    const [, atB, atC] = await toA.deadline();
    expect(atB).toBeGreaterThan(0);
    expect(atB).toBeLessThanOrEqual(300);
    // C's is B's less the margin (5 ms) and the hop's time; without inheritance it would be 3000
    expect(atC).toBeGreaterThan(0);
    expect(atC).toBeLessThanOrEqual(atB! - 5);
  });

  it("A cancelling its call cancels B's and C's handlers", async () => {
    await resetAll();
    const states = await toA.hold();
    expect(states).toEqual({ b: 'aborted Cancelled', c: 'aborted Cancelled' });
  });

  it('a tag and baggage set in A arrive at C; other attachments A sets do not', async () => {
    const atC = await toA.attachments();
    expect(atC['callisto-tag']).toBe('gray');
    expect(atC['baggage-user']).toBe('u-7');
    expect(atC['x-private']).toBeUndefined();
    expect(atC.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/);
  });

  it("one trace id in all three processes' logs, without an SDK, and the call id on every line", async () => {
    expect(await toA.trace()).toBe('end');
    const [first] = linesWith(a.log(), 'hop a: handling trace');
    expect(first).toBeDefined();
    const traceId = field(first!, 'traceId');
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(traceId).not.toBe('0'.repeat(32));
    for (const hop of [a, b, c]) {
      // past an await only where the method runs in an async call context: in an app that refers
      // services (A, B); C refers none (`asyncCallContext: true` would give it one)
      const texts = [`hop ${hop.role}: handling trace`, 'access hops.Hop.trace'];
      if (hop !== c) texts.push(`hop ${hop.role}: after an await`);
      const lines = await waitFor(() => {
        const own = texts.flatMap((text) => linesWith(hop.log(), text));
        return own.length === texts.length ? own : undefined;
      }, 5_000);
      for (const line of lines) {
        expect(field(line, 'traceId'), `${hop.role}: ${line}`).toBe(traceId);
        expect(field(line, 'callId'), `${hop.role}: ${line}`).toMatch(/^[0-9a-z]{10}-[0-9a-z]+$/);
      }
    }
  });

  it('a failure in C is retried by one layer only: B retries C, A does not retry B', async () => {
    await resetAll();
    const error = await toA.fail().catch((thrown: unknown) => thrown);
    expect(RpcError.is(error) && error.code).toBe('Internal');
    const [atA, atB, atC] = await Promise.all([toA.counts(), toB.counts(), toC.counts()]);
    // without it: A tries B 3 times, and each time B tries C 3 times (9 calls to C)
    expect({ a: atA.fail, b: atB.fail, c: atC.fail }).toEqual({ a: 1, b: 1, c: 3 });
  });

  it('below a retry nothing retries: a call to A marked as a retry reaches C once', async () => {
    await resetAll();
    const retry = withOptions(toA, { attachments: { 'callisto-retry': '2' } });
    const error = await retry.fail().catch((thrown: unknown) => thrown);
    expect(RpcError.is(error) && error.code).toBe('Internal');
    const [atA, atB, atC] = await Promise.all([toA.counts(), toB.counts(), toC.counts()]);
    expect({ a: atA.fail, b: atB.fail, c: atC.fail }).toEqual({ a: 1, b: 1, c: 1 });
  });
});
