/**
 * `callisto call --stream server`, the built binary in a child process, against a provider with server
 * streams (an app in this process, over TCP): items are printed as they arrive (the provider holds the
 * stream open until the test saw the first items on the child's stdout), with the same view as a unary
 * result; --json gives one {"item":…} line per item and the end; an error mid-stream exits 1 after the
 * items before it; Ctrl-C cancels the stream (the provider's handler stops) and exits 130; a kind the
 * command line cannot call is a usage error.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CallistoApp, callisto, defineService, RpcError } from '../../src/index.js';
import { waitFor } from '../support/wait-for.js';
import { buildCli, type CliBuild, cleanEnv, runCli, show } from './support/cli.js';

interface Feed {
  gated(count: number): AsyncIterable<{ n: number; at: Date }>;
  forever(everyMs: number): AsyncIterable<number>;
  failing(after: number): AsyncIterable<number>;
}
const FeedDef = defineService<Feed>('cli.Feed', {
  methods: { gated: { stream: 'server' }, forever: { stream: 'server' }, failing: { stream: 'server' } },
});

let cli: CliBuild;
let provider: CallistoApp;
let release: () => void = () => {};
let stopped = 0;

beforeAll(async () => {
  provider = await callisto({
    application: 'feed',
    server: { port: 0 },
    logLevel: 'silent',
    load: { configFile: false, env: false },
  });
  provider.provide(FeedDef, {
    async *gated(count: number) {
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      yield { n: 0, at: new Date(Date.UTC(2024, 0, 1)) };
      yield { n: 1, at: new Date(Date.UTC(2024, 0, 2)) };
      // the rest only once the test saw the first two printed
      await gate;
      for (let n = 2; n < count; n++) yield { n, at: new Date(Date.UTC(2024, 0, 1 + n)) };
    },
    async *forever(everyMs: number) {
      try {
        for (let n = 0; ; n++) {
          await new Promise((resolve) => setTimeout(resolve, everyMs));
          yield n;
        }
      } finally {
        stopped++;
      }
    },
    async *failing(after: number) {
      for (let n = 0; n < after; n++) yield n;
      throw new RpcError('Overloaded', `gave up after ${after}`);
    },
  });
  await provider.start();
  cli = await buildCli();
}, 240_000);

afterAll(async () => {
  cli?.close();
  await provider?.close();
});

interface Running {
  readonly child: ChildProcess;
  stdout: string;
  stderr: string;
  readonly exited: Promise<number | null>;
}

function start(args: string[]): Running {
  const child = spawn(process.execPath, [cli.main, 'call', ...args], {
    cwd: cli.cwd,
    env: cleanEnv(),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const running: Running = {
    child,
    stdout: '',
    stderr: '',
    exited: new Promise((resolve) => child.once('close', (code) => resolve(code))),
  };
  child.stdout!.on('data', (chunk: Buffer) => {
    running.stdout += chunk.toString();
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    running.stderr += chunk.toString();
  });
  return running;
}

const lines = (text: string) => text.split('\n').filter((line) => line !== '');

describe('callisto call --stream server', () => {
  it('prints each item as it arrives, before the stream ends, with the view of a unary result', async () => {
    const running = start(['cli.Feed.gated', '4', '--url', provider.address!, '--stream', 'server']);
    try {
      // the stream is still open (held by the provider) when the first two items are on stdout
      await waitFor(() => lines(running.stdout).length >= 2, 30_000, {
        message: 'the first items were not printed while the stream was open',
      });
      expect(lines(running.stdout)).toHaveLength(2);
      release();
      expect(await running.exited, running.stderr).toBe(0);
      expect(lines(running.stdout).map((line) => JSON.parse(line))).toEqual(
        [0, 1, 2, 3].map((n) => ({ n, at: { $t: 'D', v: Date.UTC(2024, 0, 1 + n) } })),
      );
      expect(running.stderr).toBe('');
    } finally {
      running.child.kill('SIGKILL');
    }
  });

  it('with --json: one {"item":…} line per item, then the end with the count', async () => {
    const result = await runCli(cli, [
      'call',
      'cli.Feed.failing',
      '3',
      '--url',
      provider.address!,
      '--stream',
      'server',
      '--json',
    ]);
    expect(result.code, show(result)).toBe(1);
    const docs = lines(result.stdout).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(docs.slice(0, 3)).toEqual([{ item: 0 }, { item: 1 }, { item: 2 }]);
    expect(docs[3]).toMatchObject({ ok: false, items: 3, error: { code: 'Overloaded' } });
    expect(docs).toHaveLength(4);
  });

  it('an error mid-stream: the items before it, then the error on stderr, exit 1', async () => {
    const result = await runCli(cli, [
      'call',
      'cli.Feed.failing',
      '2',
      '--url',
      provider.address!,
      '--stream',
      'server',
    ]);
    expect(result.code, show(result)).toBe(1);
    expect(lines(result.stdout)).toEqual(['0', '1']);
    expect(result.stderr).toMatch(/^error: .*Overloaded.*gave up after 2.*\(after 2 items\)\n$/);
  });

  it('Ctrl-C cancels the stream: the provider stops, exit 130', async () => {
    const before = stopped;
    const running = start(['cli.Feed.forever', '20', '--url', provider.address!, '--stream', 'server']);
    try {
      await waitFor(() => lines(running.stdout).length >= 3, 30_000);
      running.child.kill('SIGINT');
      expect(await running.exited, running.stderr).toBe(130);
      expect(running.stderr).toMatch(/cancelled after \d+ items/);
      await waitFor(() => stopped === before + 1, 10_000, { message: "the provider's handler did not stop" });
    } finally {
      running.child.kill('SIGKILL');
    }
  });

  it('a stream kind it cannot call is a usage error (exit 2)', async () => {
    const result = await runCli(cli, [
      'call',
      'cli.Feed.gated',
      '--url',
      provider.address!,
      '--stream',
      'bidi',
    ]);
    expect(result.code, show(result)).toBe(2);
    expect(result.stderr).toMatch(/--stream "bidi": the command line calls server streams/);
  });
});
