/**
 * Plain HTTP sockets for the hostile suite: idle or half-open connections from a loopback address of
 * their own, and a well-behaved GET from 127.0.0.1 with a deadline.
 */
import http from 'node:http';
import https from 'node:https';
import net from 'node:net';

const open = new Set<net.Socket>();

/** Opens `count` connections from `localAddress` that send `preamble` (nothing by default) and wait. */
export async function holdConnections(
  port: number,
  count: number,
  localAddress: string,
  preamble = '',
): Promise<net.Socket[]> {
  const sockets: net.Socket[] = [];
  for (let i = 0; i < count; i += 32) {
    const batch = Array.from(
      { length: Math.min(32, count - i) },
      () =>
        new Promise<net.Socket>((resolve) => {
          const socket = net.connect({ host: '127.0.0.1', port, localAddress });
          open.add(socket);
          socket.on('error', () => {});
          // reads (and drops) what it is sent, so that it sees the server close the connection
          socket.resume();
          socket.once('close', () => open.delete(socket));
          socket.once('connect', () => {
            if (preamble !== '') socket.write(preamble);
            resolve(socket);
          });
          // refused at once (closed before connecting): still resolves, as a closed socket
          socket.once('close', () => resolve(socket));
        }),
    );
    sockets.push(...(await Promise.all(batch)));
  }
  return sockets;
}

/** Destroys every held connection (afterEach). */
export function releaseConnections(): void {
  for (const socket of open) socket.destroy();
  open.clear();
}

export interface Answer {
  status: number;
  text: string;
}

/** One request on a fresh connection from `localAddress`; rejects when no answer comes within `timeoutMs`. */
export function request(
  url: string,
  init: {
    method?: string;
    headers?: Record<string, string>;
    body?: string;
    localAddress?: string;
    timeoutMs?: number;
    ca?: string;
  } = {},
): Promise<Answer> {
  const target = new URL(url);
  const client = target.protocol === 'https:' ? https : http;
  return new Promise<Answer>((resolve, reject) => {
    const req = client.request(
      target,
      {
        method: init.method ?? 'GET',
        headers: init.headers,
        localAddress: init.localAddress ?? '127.0.0.1',
        agent: false,
        timeout: init.timeoutMs ?? 2_000,
        ...(init.ca === undefined ? {} : { ca: init.ca }),
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => {
          text += chunk;
        });
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error(`no answer from ${url} within ${init.timeoutMs ?? 2_000} ms`)),
    );
    req.on('error', reject);
    req.end(init.body);
  });
}
