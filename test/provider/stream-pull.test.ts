/**
 * StreamPull (provider/stream-pull.ts): a stop wakes a pull in progress at once, and what a long stream
 * holds does not grow with its length — the `Promise.race([next, whenStopped])` it replaced kept one
 * reaction per message on the stream's `whenStopped` promise until the stream ended.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { StreamPull } from '../../src/provider/stream-pull.js';

async function* count(n: number) {
  for (let i = 0; i < n; i++) yield i;
}

describe('StreamPull', () => {
  it('pulls every step in order, then the end', async () => {
    const pull = new StreamPull(count(3)[Symbol.asyncIterator]());
    const seen: unknown[] = [];
    for (;;) {
      const step = await pull.next();
      if (step === undefined || step.done) break;
      seen.push(step.value);
    }
    expect(seen).toEqual([0, 1, 2]);
  });

  it('a stop wakes a pull whose handler is busy in an await, and every later pull', async () => {
    let release: () => void = () => {};
    async function* busy() {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      yield 1;
    }
    const pull = new StreamPull(busy()[Symbol.asyncIterator]());
    const pending = pull.next();
    pull.stop();
    expect(await pending).toBeUndefined();
    expect(await pull.until(new Promise(() => {}))).toBeUndefined();
    release();
  });

  it('holds no more memory after 300,000 messages than after 10,000', () => {
    // in a child process of its own: the heap of a test worker is shared with vitest's own work
    const child = spawnSync(
      process.execPath,
      [
        '--expose-gc',
        '--import',
        'tsx',
        fileURLToPath(new URL('../fixtures/stream-pull-heap.ts', import.meta.url)),
      ],
      { encoding: 'utf8', timeout: 60_000 },
    );
    const growth = /GROWTH (-?\d+)/.exec(child.stdout);
    expect(growth, child.stderr).not.toBeNull();
    // one retained reaction per message (the Promise.race it replaced) is about 100 MB here
    expect(Number(growth![1])).toBeLessThan(5 * 1024 * 1024);
  });
});
