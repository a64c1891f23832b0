/**
 * A slow reader against a provider in a child process: the provider's `flood` yields 16 KiB messages
 * as fast as the flow control lets it; the consumer (this process) reads 10 a second for 4 seconds.
 * The provider stays within its documented bound (docs/operations.md, "Limits": a slow reader costs the
 * provider at most its stream's send window plus one message): its resident memory (the child's RSS,
 * sampled from /proc every 100 ms) grows by less than 16 MiB over its idle baseline, it is never more
 * than the window's worth of messages ahead of the reader, and unary calls on the same connection keep
 * their latency (compared with the same calls before the stream).
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { closeAll, testApp } from '../support/apps.js';
import { killAll, startChild } from '../workers/fixtures/process.js';
import { FloodDef } from './fixtures/flood-service.js';

const PROVIDER = new URL('./fixtures/flood-provider.ts', import.meta.url);
const MESSAGE_BYTES = 16 * 1024;
const READS_PER_SECOND = 10;
const READ_FOR_MS = 4_000;
/** The test's bound on the provider's RSS growth: the window (64 KiB) is far below it; GC noise is not. */
const RSS_GROWTH_BOUND = 16 * 1024 * 1024;

afterEach(async () => {
  await closeAll();
  await killAll();
});

/** The resident set of process `pid`, bytes (Linux /proc). */
function rssOf(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (match === null) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(match[1]) * 1024;
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('a slow reader', () => {
  it.skipIf(process.platform !== 'linux')(
    "keeps the producing provider within its memory bound and the connection's other calls prompt",
    async () => {
      const child = await startChild(PROVIDER, {});
      const pid = Number(/PID (\d+)/.exec(child.output())![1]);
      const consumer = await testApp();
      const ref = consumer.refer(FloodDef, { url: child.address, retries: 0, timeoutMs: 10_000 });

      // the connection warm, the provider idle: its baseline and the calls' normal latency
      const before: number[] = [];
      for (let i = 0; i < 30; i++) {
        const started = performance.now();
        expect(await ref.ping()).toBe('pong');
        before.push(performance.now() - started);
      }
      const baseline = rssOf(pid);

      const iteration = ref.flood(MESSAGE_BYTES)[Symbol.asyncIterator]();
      const samples: number[] = [];
      const during: number[] = [];
      let read = 0;
      let maxAhead = 0;
      const until = performance.now() + READ_FOR_MS;
      try {
        while (performance.now() < until) {
          const step = await iteration.next();
          expect(step.done).toBe(false);
          expect(step.value.n).toBe(read);
          read++;
          // a unary call on the same connection, between two reads
          const started = performance.now();
          expect(await ref.ping()).toBe('pong');
          during.push(performance.now() - started);
          maxAhead = Math.max(maxAhead, (await ref.produced()) - read);
          samples.push(rssOf(pid));
          await sleep(1000 / READS_PER_SECOND);
        }
      } finally {
        await iteration.return!();
      }

      expect(read).toBeGreaterThanOrEqual((READ_FOR_MS / 1000) * READS_PER_SECOND * 0.5);
      const growth = Math.max(...samples) - baseline;
      expect(growth, `RSS grew by ${(growth / 1024 / 1024).toFixed(1)} MiB`).toBeLessThan(RSS_GROWTH_BOUND);
      // the window (64 KiB) holds 4 messages of 16 KiB (and a message may overdraw it by one):
      // a handful ahead, whatever the time; without flow control, thousands
      expect(maxAhead).toBeLessThanOrEqual(8);
      // the other calls keep their latency: generous, the machine is shared
      expect(median(during)).toBeLessThan(Math.max(20, median(before) * 5));
      expect(Math.max(...during)).toBeLessThan(1_000);
    },
    60_000,
  );
});
