/**
 * A TCP proxy on loopback in front of one provider: counts the bytes going each way (and shows each
 * chunk to a `tap`, e.g. a frame decoder, when asked), can hold every chunk for a fixed delay (in order), so tests can see what travels on the wire (compression) or give
 * one provider a longer round trip (latency-aware balancing). `silence()` cuts the link the way a
 * partition does: nothing goes through either way, the sockets stay open, and what was sent meanwhile is
 * delivered, in order, at `speak()` (as TCP retransmits once a link heals). `dropAll()` ends every
 * connection, as a restarted server does; a tap may keep a chunk from the target. Closed by `close()`.
 */
import net from 'node:net';

export interface TcpProxy {
  /** `127.0.0.1:<port>` to connect to instead of the target. */
  readonly address: string;
  /** Bytes forwarded from the consumer to the target. */
  readonly upstreamBytes: number;
  /** Bytes forwarded from the target to the consumer. */
  readonly downstreamBytes: number;
  /** From now on nothing goes through, either way, until `speak()`; the sockets stay open. */
  silence(): void;
  /** Lets traffic through again, delivering what was held, in order. */
  speak(): void;
  /** Ends every connection it carries (new ones are still accepted). */
  dropAll(): void;
  close(): Promise<void>;
}

/** What a test sees of one proxied connection: each chunk as it passes, each way (e.g. to decode frames). */
export interface ConnectionTap {
  /** Whether a chunk from the consumer goes on to the target (default: every one); one kept is never sent. */
  passes?(chunk: Buffer): boolean;
  up?(chunk: Buffer): void;
  down?(chunk: Buffer): void;
}

export interface TcpProxyOptions {
  /** Every chunk is held this long before it is forwarded (in order). Default 0. */
  delayMs?: number;
  /** Called once per connection the proxy accepts; its tap sees that connection's chunks. */
  tap?: () => ConnectionTap;
}

export async function startTcpProxy(target: string, options: TcpProxyOptions = {}): Promise<TcpProxy> {
  const [host, port] = target.split(':');
  const delayMs = options.delayMs ?? 0;
  const sockets = new Set<net.Socket>();
  let upstreamBytes = 0;
  let downstreamBytes = 0;
  let silent = false;
  const held: Array<() => void> = [];

  /** `seen` says whether the chunk is forwarded. */
  const forward = (from: net.Socket, to: net.Socket, seen: (chunk: Buffer) => boolean): void => {
    from.on('data', (chunk: Buffer) => {
      if (!seen(chunk)) return;
      if (silent) held.push(() => to.destroyed || to.write(chunk));
      else if (delayMs === 0) to.write(chunk);
      else setTimeout(() => to.destroyed || to.write(chunk), delayMs);
    });
    from.on('end', () => (delayMs === 0 ? to.end() : setTimeout(() => to.end(), delayMs)));
    from.on('close', () => setTimeout(() => to.destroy(), delayMs));
    from.on('error', () => {});
  };

  const server = net.createServer((client) => {
    const upstream = net.connect({ host: host!, port: Number(port) });
    sockets.add(client);
    sockets.add(upstream);
    client.on('close', () => sockets.delete(client));
    upstream.on('close', () => sockets.delete(upstream));
    const tap = options.tap?.();
    forward(client, upstream, (chunk) => {
      if (tap?.passes?.(chunk) === false) return false;
      upstreamBytes += chunk.length;
      tap?.up?.(chunk);
      return true;
    });
    forward(upstream, client, (chunk) => {
      downstreamBytes += chunk.length;
      tap?.down?.(chunk);
      return true;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: proxyPort } = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${proxyPort}`,
    get upstreamBytes() {
      return upstreamBytes;
    },
    get downstreamBytes() {
      return downstreamBytes;
    },
    silence() {
      silent = true;
    },
    speak() {
      silent = false;
      for (const deliver of held.splice(0)) deliver();
    },
    dropAll() {
      for (const socket of sockets) socket.destroy();
    },
    close() {
      for (const socket of sockets) socket.destroy();
      return new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
