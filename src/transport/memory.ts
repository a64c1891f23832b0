/**
 * The `memory` transport: connections between apps of one process, with no socket. Bytes still go
 * through everything above the transport (frame codec, limits, heartbeats, compression), so a call over
 * it behaves as over TCP, only without the kernel: each side's writes queue up and are delivered to the
 * other side on a later turn of the event loop (a `setImmediate`, as I/O would), in chunks of at most
 * 64 KiB; a side that pauses stops taking deliveries, so the writer's queue grows and `write` returns
 * false past 16 KiB, as a socket's does (backpressure); `end` closes both sides once what is queued is
 * delivered; `destroy` closes both at once.
 *
 * Listeners live in a {@link MemoryNetwork}, keyed by `host:port` (port 0 picks a free one). The
 * built-in `memory` transport uses one network per process, so apps in one process find each other like
 * apps on one loopback interface; the test kit gives each kit a network of its own.
 */
import { EventEmitter } from 'node:events';
import type { ByteStream, Transport, TransportListener } from './transport.js';

/** `write` returns false once this much is queued, as a socket does by default. */
const HIGH_WATER_BYTES = 16 * 1024;
/** Largest chunk delivered at once (a socket read delivers at most 64 KiB). */
const MAX_CHUNK_BYTES = 64 * 1024;
/** The host a memory connection appears to come from. */
export const MEMORY_CLIENT_HOST = 'memory';

type Accept = (stream: ByteStream) => void;

/** Where memory listeners live; connections only reach listeners of the same network. */
export interface MemoryNetwork {
  /** Listens on `host:port` (0: the next free port). Throws when the address is taken. */
  listen(host: string, port: number, accept: Accept): { port: number; close(): void };
  /** Connects to `host:port`; the stream emits `connect`, or `error` (ECONNREFUSED) and `close`. */
  connect(host: string, port: number): ByteStream;
  /**
   * Cuts (`true`) or heals (`false`) the link to the listener at `host:port`, as a partition does:
   * while cut, nothing written on its connections, either way, reaches the other side, and the
   * connections stay open; at heal, what was written meanwhile is delivered, in order (as TCP
   * retransmits). Connections made while cut open, and carry nothing until it heals. Tests of silent
   * hosts use it.
   */
  silence(host: string, port: number, cut: boolean): void;
  /** Listeners open now. */
  readonly listeners: number;
}

/** The connections to one listener address, and whether its link is cut. */
interface Link {
  silent: boolean;
  readonly streams: Set<MemoryStream>;
}

class MemoryStream extends EventEmitter implements ByteStream {
  peer: MemoryStream | undefined;
  /** The link this stream's connection goes over (see MemoryNetwork.silence). */
  link: Link | undefined;
  remoteAddress: string | undefined;
  remotePort: number | undefined;
  destroyed = false;
  writableEnded = false;
  /** Chunks written by this side, not yet delivered to the peer. */
  #queue: Buffer[] = [];
  #queued = 0;
  #needDrain = false;
  #paused = false;
  #deliveryScheduled = false;
  /** The peer ended and everything it wrote was delivered here. */
  #remoteEnded = false;
  /** This side ended and the peer was told, after everything this side wrote. */
  #endDelivered = false;

  get writableLength(): number {
    return this.#queued;
  }

  write(chunk: Uint8Array): boolean {
    if (this.destroyed || this.writableEnded) return false;
    if (chunk.length > 0) {
      const copy = Buffer.from(chunk); // the writer may reuse its buffer
      this.#queue.push(copy);
      this.#queued += copy.length;
      this.#scheduleDelivery();
    }
    if (this.#queued >= HIGH_WATER_BYTES) {
      this.#needDrain = true;
      return false;
    }
    return true;
  }

  end(): void {
    if (this.destroyed || this.writableEnded) return;
    this.writableEnded = true;
    this.#scheduleDelivery();
  }

  destroy(): void {
    if (this.destroyed) return;
    this.#close();
    const peer = this.peer;
    if (peer !== undefined) peer.#close();
  }

  pause(): this {
    this.#paused = true;
    return this;
  }

  resume(): this {
    if (!this.#paused) return this;
    this.#paused = false;
    const peer = this.peer;
    if (peer !== undefined) peer.#scheduleDelivery();
    return this;
  }

  /** Opens the pair on the connecting side (the peer is the accepted stream). */
  connected(): void {
    if (this.destroyed) return;
    this.emit('connect');
    this.#scheduleDelivery();
  }

  /** The link healed: deliver what was held. */
  linkHealed(): void {
    this.#scheduleDelivery();
  }

  #scheduleDelivery(): void {
    if (this.#deliveryScheduled || this.destroyed) return;
    this.#deliveryScheduled = true;
    setImmediate(() => {
      this.#deliveryScheduled = false;
      this.#deliver();
    });
  }

  /** Hands what this side wrote to the peer, unless the peer is paused. */
  #deliver(): void {
    const peer = this.peer;
    if (this.destroyed || peer === undefined || peer.destroyed || peer.#paused) return;
    if (this.link?.silent) return; // held until the link heals
    while (this.#queue.length > 0 && !peer.#paused && !peer.destroyed) {
      const chunk = this.#takeChunk();
      peer.emit('data', chunk);
    }
    if (this.#queue.length > 0) return; // the peer paused while reading: the rest waits for resume()
    if (this.#needDrain) {
      this.#needDrain = false;
      this.emit('drain');
    }
    if (this.writableEnded && !this.#endDelivered) {
      this.#endDelivered = true;
      peer.#remoteEnded = true;
      // No half-open connections (as net's default): the peer ends its side too.
      if (!peer.writableEnded) peer.end();
      peer.#closeIfDone();
      this.#closeIfDone();
    }
  }

  /** The next chunk to deliver: queued writes joined, at most MAX_CHUNK_BYTES. */
  #takeChunk(): Buffer {
    const first = this.#queue[0]!;
    if (first.length > MAX_CHUNK_BYTES) {
      this.#queue[0] = first.subarray(MAX_CHUNK_BYTES);
      this.#queued -= MAX_CHUNK_BYTES;
      return first.subarray(0, MAX_CHUNK_BYTES);
    }
    let size = 0;
    let count = 0;
    while (count < this.#queue.length && size + this.#queue[count]!.length <= MAX_CHUNK_BYTES) {
      size += this.#queue[count]!.length;
      count++;
    }
    const parts = this.#queue.splice(0, count);
    this.#queued -= size;
    return count === 1 ? parts[0]! : Buffer.concat(parts, size);
  }

  /** Both directions are finished: close this side. */
  #closeIfDone(): void {
    if (this.#endDelivered && this.#remoteEnded) this.#close();
  }

  #close(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.writableEnded = true;
    this.#queue = [];
    this.#queued = 0;
    this.link?.streams.delete(this);
    process.nextTick(() => this.emit('close'));
  }
}

function refused(host: string, port: number): Error {
  return Object.assign(new Error(`connect ECONNREFUSED memory://${host}:${port}`), {
    code: 'ECONNREFUSED',
  });
}

export function createMemoryNetwork(): MemoryNetwork {
  const listening = new Map<string, Accept>();
  const links = new Map<string, Link>();
  const linkOf = (key: string): Link => {
    let link = links.get(key);
    if (link === undefined) {
      link = { silent: false, streams: new Set() };
      links.set(key, link);
    }
    return link;
  };
  let nextPort = 1;
  let nextClientPort = 1;
  const keyOf = (host: string, port: number) => `${host}:${port}`;

  const freePort = (host: string): number => {
    for (let tries = 0; tries < 65_535; tries++) {
      const port = nextPort;
      nextPort = nextPort === 65_535 ? 1 : nextPort + 1;
      if (!listening.has(keyOf(host, port))) return port;
    }
    throw new Error(`memory network: no free port on ${host}`);
  };

  return {
    listen(host, port, accept) {
      const chosen = port === 0 ? freePort(host) : port;
      const key = keyOf(host, chosen);
      if (listening.has(key)) {
        throw Object.assign(new Error(`listen EADDRINUSE: address already in use memory://${key}`), {
          code: 'EADDRINUSE',
        });
      }
      listening.set(key, accept);
      return {
        port: chosen,
        close() {
          if (listening.get(key) === accept) listening.delete(key);
        },
      };
    },
    connect(host, port) {
      const client = new MemoryStream();
      client.remoteAddress = host;
      client.remotePort = port;
      setImmediate(() => {
        if (client.destroyed) return;
        const accept = listening.get(keyOf(host, port));
        if (accept === undefined) {
          client.emit('error', refused(host, port));
          client.destroy();
          return;
        }
        const server = new MemoryStream();
        server.remoteAddress = MEMORY_CLIENT_HOST;
        server.remotePort = nextClientPort;
        nextClientPort = nextClientPort === 65_535 ? 1 : nextClientPort + 1;
        client.peer = server;
        server.peer = client;
        const link = linkOf(keyOf(host, port));
        client.link = link;
        server.link = link;
        link.streams.add(client).add(server);
        accept(server);
        client.connected();
      });
      return client;
    },
    silence(host, port, cut) {
      const link = linkOf(keyOf(host, port));
      link.silent = cut;
      if (!cut) for (const stream of link.streams) stream.linkHealed();
    },
    get listeners() {
      return listening.size;
    },
  };
}

/** The network of the built-in `memory` transport: one per process, like a loopback interface. */
export const processMemoryNetwork: MemoryNetwork = createMemoryNetwork();

/** A `memory` transport over `network` (the process's by default). */
export function createMemoryTransport(network: MemoryNetwork = processMemoryNetwork): Transport {
  return {
    name: 'memory',
    connect({ host, port }) {
      return network.connect(host, port);
    },
    async listen({ host, port }, onConnection) {
      const listener = network.listen(host, port, onConnection);
      let closed = false;
      return {
        port: listener.port,
        async close() {
          if (closed) return;
          closed = true;
          listener.close();
        },
      } satisfies TransportListener;
    },
  };
}
