/** Test helpers for the HTTP entry: a provider app serving HTTP, and plain requests over real sockets. */
import net from 'node:net';
import type { AppOptions, CallistoApp } from '../../src/index.js';
import { callContext, defineService, RpcError } from '../../src/index.js';
import { testApp } from '../support/apps.js';

export interface User {
  id: number;
  name: string;
  born: Date;
  balance: bigint;
}

export interface UserService {
  getUser(id: number): Promise<User>;
  rename(id: number, name: string): Promise<void>;
  whoami(): Promise<Record<string, string>>;
  slow(ms: number): Promise<string>;
  fail(kind: string): Promise<never>;
}

export const UserServiceDef = defineService<UserService>('example.UserService', {
  version: '1.0.0',
  methods: { getUser: { idempotent: true }, rename: {}, whoami: {}, slow: {}, fail: {} },
});

export const userService = {
  async getUser(id: number): Promise<User> {
    return { id, name: `user-${id}`, born: new Date(0), balance: 10n ** 20n };
  },
  async rename(): Promise<void> {},
  async whoami(): Promise<Record<string, string>> {
    const ctx = callContext();
    if (ctx?.responseAttachments) ctx.responseAttachments['served-by'] = 'http-test';
    return { ...(ctx?.attachments ?? {}) };
  },
  /** Answers after `ms`, or gives up when its caller's signal fires. */
  slow(ms: number): Promise<string> {
    const signal = callContext()?.signal;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => resolve('done'), ms);
      signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(signal.reason);
      });
    });
  },
  async fail(kind: string): Promise<never> {
    if (kind === 'rpc') throw new RpcError('Unauthorized', 'no entry');
    throw new Error('it broke');
  },
  /** Not declared: never callable. */
  secret(): string {
    return 'leaked';
  },
};

/** A provider serving UserService over TCP and HTTP (port 0). */
export async function httpProvider(options: AppOptions = {}): Promise<{ app: CallistoApp; base: string }> {
  const app = await testApp({
    ...options,
    server: { ...options.server, http: { port: 0, ...options.server?.http } } as AppOptions['server'],
  });
  app.provide(UserServiceDef, userService);
  await app.start();
  return { app, base: `http://127.0.0.1:${httpPort(app)}` };
}

export function httpPort(app: CallistoApp): number {
  const port = app.httpPort;
  if (port === undefined) throw new Error('the app serves no HTTP');
  return port;
}

export async function post(
  url: string,
  body: string | undefined,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: unknown; headers: Headers }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body }),
  });
  const text = await response.text();
  return {
    status: response.status,
    json: text === '' ? undefined : JSON.parse(text),
    headers: response.headers,
  };
}

/**
 * Writes `chunks` on a raw socket (optionally leaving it open) and resolves with everything the server
 * sent until it closed the connection.
 */
export function rawExchange(
  port: number,
  write: (socket: net.Socket) => void,
): Promise<{ text: string; status: number; body: unknown }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('connect', () => write(socket));
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      const start = text.indexOf('\r\n\r\n');
      const rawBody = start < 0 ? '' : text.slice(start + 4);
      let body: unknown;
      try {
        body = rawBody === '' ? undefined : JSON.parse(rawBody);
      } catch {
        body = rawBody;
      }
      resolve({ text, status, body });
    });
  });
}
