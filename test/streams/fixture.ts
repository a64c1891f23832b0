/**
 * A streaming service for the stream tests: a server stream (`count`, `ticks`), a client stream
 * (`sum`), a two-way stream (`echo`), and one unary method (`ping`) to share their connection, with a
 * probe of what the provider's handlers did (how far ahead a producer is, whether `finally` ran).
 */
import { appInternals } from '../../src/app/internals.js';
import { type CallistoApp, callContext, defineService, RpcError } from '../../src/index.js';

export interface Tick {
  n: number;
}

export class StreamFailed extends Error {
  override name = 'StreamFailed';
  constructor(readonly after: number) {
    super(`failed after ${after}`);
  }
}

export interface Streaming {
  count(to: number, failAfter: number): AsyncIterable<Tick>;
  /** Yields forever, as fast as the window allows. */
  flood(size: number): AsyncIterable<Tick>;
  sum(
    label: string,
    numbers: AsyncIterable<number>,
  ): Promise<{ label: string; total: number; count: number }>;
  echo(messages: AsyncIterable<Tick>): AsyncIterable<Tick>;
  /** Reads every message first (the caller half-closes), then answers. */
  collect(messages: AsyncIterable<Tick>): AsyncIterable<Tick>;
  /** A client stream that never reads its input (until cancelled). */
  stall(messages: AsyncIterable<Tick>): Promise<number>;
  /** Yields one message every `ms` forever. */
  slow(ms: number): AsyncIterable<Tick>;
  ping(): Promise<string>;
}

export const streaming = defineService<Streaming>('test.Streaming', {
  methods: {
    count: { stream: 'server' },
    flood: { stream: 'server' },
    sum: { stream: 'client' },
    echo: { stream: 'bidi' },
    collect: { stream: 'bidi' },
    stall: { stream: 'client' },
    slow: { stream: 'server' },
    ping: {},
  },
  errors: [StreamFailed],
});

/** What the provider's handlers report. */
export interface Probe {
  produced: number;
  finallyRan: number;
  aborted: number;
}

export function streamingImpl(probe: Probe) {
  return {
    async *count(to: number, failAfter: number) {
      const signal = callContext()?.signal;
      signal?.addEventListener('abort', () => probe.aborted++);
      try {
        for (let n = 0; n < to; n++) {
          if (n === failAfter) throw new StreamFailed(n);
          probe.produced++;
          yield { n };
        }
      } finally {
        probe.finallyRan++;
      }
    },
    async *flood(size: number) {
      const pad = 'x'.repeat(size);
      try {
        for (let n = 0; ; n++) {
          probe.produced++;
          yield { n, pad };
        }
      } finally {
        probe.finallyRan++;
      }
    },
    async sum(label: string, numbers: AsyncIterable<number>) {
      let total = 0;
      let count = 0;
      for await (const n of numbers) {
        total += n;
        count++;
      }
      return { label, total, count };
    },
    async *echo(messages: AsyncIterable<Tick>) {
      try {
        for await (const message of messages) {
          probe.produced++;
          yield { n: message.n * 2 };
        }
      } finally {
        probe.finallyRan++;
      }
    },
    async *collect(messages: AsyncIterable<Tick>) {
      const seen: Tick[] = [];
      for await (const message of messages) seen.push(message);
      yield { n: seen.length };
      for (const message of seen) yield { n: message.n * 2 };
    },
    async stall(_messages: AsyncIterable<Tick>) {
      const signal = callContext()?.signal;
      await new Promise<void>((resolve) => signal?.addEventListener('abort', () => resolve()));
      return 0;
    },
    async *slow(ms: number) {
      try {
        for (let n = 0; ; n++) {
          await new Promise((resolve) => setTimeout(resolve, ms));
          probe.produced++;
          yield { n };
        }
      } finally {
        probe.finallyRan++;
      }
    },
    async ping() {
      return 'pong';
    },
  };
}

export { RpcError };

/** Streams open on an app's provider connections and on its consumer connections. */
export function openStreams(app: CallistoApp): number {
  const { provider, consumer } = appInternals(app);
  let open = provider.server?.openStreams ?? 0;
  for (const connection of consumer.pool.connections()) open += connection.openStreams;
  return open;
}
