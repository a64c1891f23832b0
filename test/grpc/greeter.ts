/**
 * The Greeter service of the gRPC entry tests (fixtures/greeter.proto), its Callisto definition and
 * implementation, and a grpc-js client for it. What the implementation saw (deadlines, attachments,
 * streams ended) is recorded for the tests to check.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import type { ErrorCodeName } from '../../src/core/rpc-error.js';
import { callContext, defineService, RpcError } from '../../src/index.js';

export const GREETER_PROTO = path.join(
  path.dirname(fileURLToPath(import.meta.url)),
  'fixtures/greeter.proto',
);

export interface Greeter {
  sayHello(name: string): Promise<{ message: string }>;
  whoami(): Promise<{ message: string }>;
  fail(code: string): Promise<{ message: string }>;
  slow(ms: number): Promise<{ message: string }>;
  countTo(n: number, delayMs: number): AsyncIterable<number>;
  sum(values: AsyncIterable<number>): Promise<{ total: number }>;
  echo(values: AsyncIterable<number>): AsyncIterable<number>;
}

const root = protobuf.loadSync(GREETER_PROTO);

export const GreeterDef = defineService<Greeter>('callisto.test.Greeter', {
  methods: {
    sayHello: {},
    whoami: {},
    fail: {},
    slow: {},
    countTo: { stream: 'server' },
    sum: { stream: 'client' },
    echo: { stream: 'bidi' },
  },
  protobuf: root,
});

/** What the handlers saw. */
export interface Seen {
  deadlines: number[];
  attachments: Record<string, string>[];
  /** Handlers whose `finally` ran, with why: 'done' or the signal's reason code. */
  finished: string[];
}

export function greeterImpl(seen: Seen): Greeter {
  return {
    async sayHello(name) {
      const ctx = callContext();
      seen.attachments.push({ ...(ctx?.attachments ?? {}) });
      if (ctx?.responseAttachments) ctx.responseAttachments['x-greeted'] = name;
      return { message: `hello ${name}` };
    },
    async whoami() {
      const identity = callContext()?.identity;
      return { message: identity ? `${identity.via}:${identity.id}` : 'anonymous' };
    },
    async fail(code) {
      throw new RpcError(code as ErrorCodeName, `failed with ${code}`);
    },
    async slow(ms) {
      const ctx = callContext();
      seen.deadlines.push(ctx?.deadline ?? 0);
      const signal = ctx?.signal;
      try {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(resolve, ms);
          signal?.addEventListener('abort', () => {
            clearTimeout(timer);
            reject(signal.reason);
          });
        });
        return { message: `slept ${ms}` };
      } finally {
        seen.finished.push(signal?.aborted ? `slow:${(signal.reason as RpcError).code}` : 'slow:done');
      }
    },
    async *countTo(n, delayMs) {
      try {
        for (let i = 1; i <= n; i++) {
          if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
          yield i;
        }
        seen.finished.push('countTo:done');
      } finally {
        seen.finished.push('countTo:finally');
      }
    },
    async sum(values) {
      let total = 0;
      for await (const value of values) total += value;
      return { total };
    },
    async *echo(values) {
      try {
        for await (const value of values) yield value * 10;
      } finally {
        seen.finished.push('echo:finally');
      }
    },
  };
}

export function newSeen(): Seen {
  return { deadlines: [], attachments: [], finished: [] };
}

// biome-ignore lint/suspicious/noExplicitAny: grpc-js clients are typed by the loaded package
export type GreeterClient = any;

/** A grpc-js client of the Greeter at `address`, insecure unless `credentials` are given. */
export function greeterClient(
  address: string,
  credentials = grpc.credentials.createInsecure(),
  options: grpc.ClientOptions = {},
): GreeterClient {
  const definition = protoLoader.loadSync(GREETER_PROTO, { keepCase: true, longs: String, defaults: true });
  // biome-ignore lint/suspicious/noExplicitAny: the loaded package's shape
  const loaded = grpc.loadPackageDefinition(definition) as any;
  return new loaded.callisto.test.Greeter(address, credentials, options);
}

/** A unary call as a promise, with the metadata and status the client received. */
export function unary<T>(
  client: GreeterClient,
  method: string,
  request: object,
  options: { metadata?: grpc.Metadata; deadline?: Date } = {},
): Promise<{ value?: T; error?: grpc.ServiceError; trailers?: grpc.Metadata; headers?: grpc.Metadata }> {
  return new Promise((resolve) => {
    let headers: grpc.Metadata | undefined;
    let trailers: grpc.Metadata | undefined;
    const call = client[method](
      request,
      options.metadata ?? new grpc.Metadata(),
      options.deadline ? { deadline: options.deadline } : {},
      (error: grpc.ServiceError | null, value: T) => {
        // the status event comes after the callback in grpc-js; wait for it
        setImmediate(() =>
          resolve({ value: error ? undefined : value, error: error ?? undefined, trailers, headers }),
        );
      },
    );
    call.on('metadata', (metadata: grpc.Metadata) => {
      headers = metadata;
    });
    call.on('status', (status: grpc.StatusObject) => {
      trailers = status.metadata;
    });
  });
}
