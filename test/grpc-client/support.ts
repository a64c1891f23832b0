/**
 * grpc-js servers as the providers of the gRPC consumer tests: the `demo.Greeter` service of
 * fixtures/greeter.proto (loaded with @grpc/proto-loader on the server, protobufjs on the consumer) and
 * a JSON-bodied `test.Json` service (`application/grpc+json`, the args array as JSON), each counting the
 * calls it ran, on free ports, over h2c or TLS.
 */
import http2 from 'node:http2';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import protobuf from 'protobufjs';
import { defineService } from '../../src/index.js';

export const PROTO = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures/greeter.proto');

export interface Item {
  value: number;
  pad: string;
}

export interface GreeterApi {
  say(name: string): Promise<string>;
  getUser(id: number): Promise<{ id: number; name: string }>;
  fail(status: number, message: string): Promise<string>;
  wait(ms: number): Promise<string>;
  big(bytes: number): Promise<string>;
  count(limit: number, pad: number): AsyncIterable<Item>;
  sum(input: AsyncIterable<Partial<Item>>): Promise<number>;
  echo(input: AsyncIterable<Partial<Item>>): AsyncIterable<Item>;
}

export const root = protobuf.loadSync(PROTO);

export const Greeter = defineService<GreeterApi>('demo.Greeter', {
  protobuf: root,
  methods: {
    say: {},
    getUser: { idempotent: true },
    fail: {},
    wait: {},
    big: {},
    count: { stream: 'server' },
    sum: { stream: 'client' },
    echo: { stream: 'bidi' },
  },
});

/** The JSON-bodied service: `application/grpc+json`. */
export interface JsonApi {
  add(a: number, b: number): Promise<number>;
  info(): Promise<{ name: string; tags: string[] }>;
  ticks(count: number): AsyncIterable<{ tick: number; at: string }>;
}
export const JsonService = defineService<JsonApi>('test.Json', {
  methods: { add: {}, info: {}, ticks: { stream: 'server' } },
});

const greeterDefinition = (() => {
  const loaded = protoLoader.loadSync(PROTO, { keepCase: true, defaults: true });
  const pkg = grpc.loadPackageDefinition(loaded) as unknown as {
    demo: { Greeter: { service: grpc.ServiceDefinition } };
  };
  return pkg.demo.Greeter.service;
})();

const json = {
  serialize: (value: unknown) => Buffer.from(JSON.stringify(value)),
  deserialize: (bytes: Buffer) => (bytes.length === 0 ? undefined : JSON.parse(bytes.toString())),
};

const jsonDefinition: grpc.ServiceDefinition = {
  add: {
    path: '/test.Json/add',
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  },
  ticks: {
    path: '/test.Json/ticks',
    requestStream: false,
    responseStream: true,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  },
  info: {
    path: '/test.Json/info',
    requestStream: false,
    responseStream: false,
    requestSerialize: json.serialize,
    requestDeserialize: json.deserialize,
    responseSerialize: json.serialize,
    responseDeserialize: json.deserialize,
  },
};

/** What one server saw. */
export interface Seen {
  /** Calls each method's handler ran, by method. */
  readonly calls: Record<string, number>;
  /** The metadata of the last call of each method. */
  readonly metadata: Record<string, grpc.Metadata>;
  /** The deadline of the last call of each method (`call.getDeadline()`). */
  readonly deadlines: Record<string, grpc.Deadline>;
  /** The peers (client address and port: one per HTTP/2 connection) calls came from. */
  readonly peers: Set<string>;
  /** The names `say` ran for, in order (a refusal before running adds none). */
  readonly ran: string[];
  /** Streams whose handler saw 'cancelled'. */
  cancelled: number;
  /** Messages a server stream wrote (count). */
  written: number;
  /** A server stream's write returned false and it is waiting for 'drain'. */
  blocked: boolean;
}

export interface GreeterServer {
  readonly port: number;
  readonly url: string;
  readonly seen: Seen;
  /** Answer every call of `method` with this status before running it (undefined: run normally). */
  refuseWith: Partial<Record<string, { code: grpc.status; afterRunning?: boolean }>>;
  readonly server: grpc.Server;
  close(): Promise<void>;
}

export interface GreeterServerOptions {
  readonly name?: string;
  readonly credentials?: grpc.ServerCredentials;
  readonly options?: grpc.ServerOptions;
  /** The port to listen on (default a free one). */
  readonly port?: number;
}

const servers: GreeterServer[] = [];

/** A grpc-js server of demo.Greeter and test.Json on a free port of 127.0.0.1. */
export async function greeterServer(options: GreeterServerOptions = {}): Promise<GreeterServer> {
  const name = options.name ?? 'server';
  const seen: Seen = {
    calls: {},
    metadata: {},
    deadlines: {},
    peers: new Set(),
    ran: [],
    cancelled: 0,
    written: 0,
    blocked: false,
  };
  const server = new grpc.Server(options.options);
  const refuseWith: GreeterServer['refuseWith'] = {};
  const count = (
    method: string,
    call: {
      metadata: grpc.Metadata;
      getDeadline(): grpc.Deadline;
      getPeer(): string;
      on(event: 'cancelled', listener: () => void): unknown;
    },
  ) => {
    if (method === 'wait') {
      call.on('cancelled', () => {
        seen.cancelled++;
      });
    }
    seen.calls[method] = (seen.calls[method] ?? 0) + 1;
    seen.peers.add(call.getPeer());
    seen.metadata[method] = call.metadata;
    seen.deadlines[method] = call.getDeadline();
  };
  /** Unary handlers: refused (before or after running) when asked. */
  const unary =
    <Req, Res>(
      method: string,
      run: (request: Req, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res> | Res,
    ) =>
    async (call: grpc.ServerUnaryCall<Req, Res>, callback: grpc.sendUnaryData<Res>) => {
      const refusal = refuseWith[method];
      if (refusal !== undefined && refusal.afterRunning !== true) {
        callback({ code: refusal.code, details: `${name} refuses ${method}` });
        return;
      }
      count(method, call);
      try {
        const result = await run(call.request, call);
        if (refusal !== undefined) {
          callback({ code: refusal.code, details: `${name} ran ${method}, then failed` });
          return;
        }
        const trailers = new grpc.Metadata();
        trailers.set('x-served-by', name);
        callback(null, result, trailers);
      } catch (error) {
        callback(error as grpc.ServiceError);
      }
    };
  server.addService(greeterDefinition, {
    say: unary<{ name: string }, { value: string }>('say', (request, call) => {
      seen.ran.push(request.name);
      const echoed = call.metadata.get('x-echo')[0];
      if (echoed !== undefined) {
        const headers = new grpc.Metadata();
        headers.set('x-echoed', String(echoed));
        call.sendMetadata(headers);
      }
      return { value: `hello ${request.name} from ${name}` };
    }),
    getUser: unary<{ id: number }, { id: number; name: string }>('getUser', (request) => ({
      id: request.id,
      name: `user ${request.id} of ${name}`,
    })),
    fail: (
      call: grpc.ServerUnaryCall<{ status: number; message: string }, unknown>,
      callback: grpc.sendUnaryData<unknown>,
    ) => {
      count('fail', call);
      const trailers = new grpc.Metadata();
      trailers.set('x-trailer', 'kept');
      if (call.request.message === 'rich')
        trailers.set('grpc-status-details-bin', Buffer.from('rich status'));
      callback({ code: call.request.status, details: call.request.message, metadata: trailers });
    },
    wait: unary<{ ms: number }, { value: string }>(
      'wait',
      (request) =>
        new Promise((done) => {
          setTimeout(() => done({ value: `waited ${request.ms}` }), request.ms).unref();
        }),
    ),
    big: unary<{ bytes: number }, { value: string }>('big', (request) => ({
      value: 'x'.repeat(request.bytes),
    })),
    count: (call: grpc.ServerWritableStream<{ limit: number; pad: number }, Item>) => {
      count('count', call);
      call.on('cancelled', () => {
        seen.cancelled++;
      });
      const pad = 'p'.repeat(call.request.pad);
      let next = 0;
      const write = (): void => {
        while (next < call.request.limit) {
          if (call.cancelled) return;
          const room = call.write({ value: next++, pad });
          seen.written++;
          if (!room) {
            seen.blocked = true;
            call.once('drain', () => {
              seen.blocked = false;
              write();
            });
            return;
          }
        }
        call.end();
      };
      write();
    },
    sum: (
      call: grpc.ServerReadableStream<Item, { value: number }>,
      callback: grpc.sendUnaryData<{ value: number }>,
    ) => {
      count('sum', call);
      let total = 0;
      call.on('data', (item: Item) => {
        total += item.value;
      });
      call.on('cancelled', () => {
        seen.cancelled++;
      });
      call.on('end', () => callback(null, { value: total }));
    },
    echo: (call: grpc.ServerDuplexStream<Item, Item>) => {
      count('echo', call);
      call.on('cancelled', () => {
        seen.cancelled++;
      });
      call.on('data', (item: Item) => call.write({ value: item.value * 10, pad: item.pad }));
      call.on('end', () => call.end());
    },
  });
  server.addService(jsonDefinition, {
    add: unary<[number, number], number>('add', (args) => args[0] + args[1]),
    info: unary<[], { name: string; tags: string[] }>('info', () => ({ name, tags: ['a', 'b'] })),
    ticks: (call: grpc.ServerWritableStream<[number], { tick: number; at: string }>) => {
      for (let tick = 0; tick < call.request[0]; tick++) call.write({ tick, at: `t${tick}` });
      call.end();
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync(
      `127.0.0.1:${options.port ?? 0}`,
      options.credentials ?? grpc.ServerCredentials.createInsecure(),
      (error, bound) => (error ? reject(error) : resolve(bound)),
    ),
  );
  const scheme = options.credentials === undefined ? 'grpc' : 'grpcs';
  const handle: GreeterServer = {
    port,
    url: `${scheme}://127.0.0.1:${port}`,
    seen,
    refuseWith,
    server,
    close: () =>
      new Promise<void>((done) => {
        server.forceShutdown();
        done();
      }),
  };
  servers.push(handle);
  return handle;
}

/** Closes every server `greeterServer` started. */
export async function closeServers(): Promise<void> {
  await Promise.all(servers.splice(0).map((server) => server.close()));
}

/** The error a promise rejects with. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error('expected a rejection');
    },
    (error: unknown) => error,
  );
}

/** A scripted HTTP/2 server that is no gRPC server: it does one wrong thing to every stream. */
export interface FaultServer {
  readonly url: string;
  /** Streams it received. */
  readonly streams: () => number;
  close(): Promise<void>;
}

export type Fault =
  /** RST_STREAM REFUSED_STREAM: the server's application never saw it. */
  | 'refuse-stream'
  /** RST_STREAM INTERNAL_ERROR after reading the request: it may have run. */
  | 'reset-internal'
  /** Answers with its own bytes: see `respond`. */
  | 'respond';

export async function faultServer(
  fault: Fault,
  respond?: (stream: http2.ServerHttp2Stream) => void,
): Promise<FaultServer> {
  let streams = 0;
  const sessions = new Set<http2.ServerHttp2Session>();
  const server = http2.createServer();
  server.on('session', (session) => {
    sessions.add(session);
    session.on('close', () => sessions.delete(session));
  });
  server.on('stream', (stream) => {
    streams++;
    stream.on('error', () => {});
    if (fault === 'refuse-stream') stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
    else if (fault === 'reset-internal') {
      stream.resume();
      stream.on('end', () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
    } else respond?.(stream as http2.ServerHttp2Stream);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as { port: number };
  const handle: FaultServer = {
    url: `grpc://127.0.0.1:${port}`,
    streams: () => streams,
    close: async () => {
      for (const session of sessions) session.destroy();
      await new Promise((done) => server.close(done));
    },
  };
  faults.push(handle);
  return handle;
}

const faults: FaultServer[] = [];

/** Closes every fault server. */
export async function closeFaultServers(): Promise<void> {
  await Promise.all(faults.splice(0).map((server) => server.close()));
}

/**
 * A raw HTTP/2 peer, for what node's own server cannot do: `goaway` answers each HEADERS with GOAWAY
 * (last stream id 0, NO_ERROR: the stream was provably never processed); `silent` completes the
 * handshake, then never answers anything again (streams or PINGs): a server cut off.
 */
export async function rawHttp2Server(mode: 'goaway' | 'silent'): Promise<FaultServer> {
  let streams = 0;
  const sockets = new Set<net.Socket>();
  const settings = Buffer.from([0, 0, 0, 4, 0, 0, 0, 0, 0]);
  const settingsAck = Buffer.from([0, 0, 0, 4, 1, 0, 0, 0, 0]);
  const goAway = Buffer.from([0, 0, 8, 7, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    socket.write(settings);
    let buffered = Buffer.alloc(0);
    let prefaceSeen = false;
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      if (!prefaceSeen) {
        if (buffered.length < 24) return;
        buffered = buffered.subarray(24);
        prefaceSeen = true;
      }
      while (buffered.length >= 9) {
        const length = buffered.readUIntBE(0, 3);
        if (buffered.length < 9 + length) return;
        const type = buffered[3];
        const flags = buffered[4]!;
        buffered = buffered.subarray(9 + length);
        if (type === 4 && (flags & 1) === 0) socket.write(settingsAck);
        if (type === 1) {
          streams++;
          if (mode === 'goaway') socket.write(goAway);
        }
      }
    });
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as net.AddressInfo;
  const handle: FaultServer = {
    url: `grpc://127.0.0.1:${port}`,
    streams: () => streams,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((done) => server.close(done));
    },
  };
  faults.push(handle);
  return handle;
}
