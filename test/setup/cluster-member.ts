/**
 * One server process of a test cluster (an etcd member, a ZooKeeper server, a Redis server or sentinel):
 * started on loopback or inside a namespaced host (`ip netns exec`, same pid), its output in a log file
 * of its directory, waited for until a probe says it serves, stopped (SIGTERM), killed (SIGKILL) and
 * started again on demand. Every process started here is SIGKILLed when the test process exits; one left
 * in a namespace by a killed run is swept with the namespace (test/multihost/support/netns.ts).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect } from 'node:net';

/** Where a member runs: a namespaced host (structurally test/multihost/support/netns.ts `Host`). */
export interface MemberHost {
  readonly address: string;
  command(argv: readonly string[]): [string, string[]];
}

export interface MemberSpec {
  readonly name: string;
  /** Address clients use: the host's address, or 127.0.0.1. */
  readonly ip: string;
  /** Port clients use. */
  readonly port: number;
  readonly host?: MemberHost | undefined;
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly logFile: string;
  /** Writes config files before each start. */
  readonly prepare?: () => void;
  /** Resolves true once the member serves. */
  readonly probe: () => Promise<boolean>;
}

export interface ClusterMember {
  readonly name: string;
  readonly ip: string;
  readonly port: number;
  /** `ip:port` for clients. */
  readonly address: string;
  readonly pid: number | undefined;
  readonly running: boolean;
  /** Starts (again) and waits until it serves. */
  start(): Promise<void>;
  /** SIGTERM, SIGKILL after 5 s; resolves once the process has exited. */
  stop(): Promise<void>;
  /** SIGKILL; resolves once the process has exited. */
  kill(): Promise<void>;
  /** The last lines of its log. */
  logTail(): string;
}

const READY_TIMEOUT_MS = 45_000;
const live = new Set<ChildProcess>();
let exitHook = false;

function waitExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export function createMember(spec: MemberSpec, startTimeoutMs = READY_TIMEOUT_MS): ClusterMember {
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const child of live) child.kill('SIGKILL');
    });
  }
  let child: ChildProcess | undefined;
  const logTail = (): string => {
    try {
      return readFileSync(spec.logFile, 'utf8').split('\n').slice(-25).join('\n');
    } catch {
      return '';
    }
  };
  const halt = async (signal: NodeJS.Signals): Promise<void> => {
    const current = child;
    child = undefined;
    if (!current) return;
    const exited = waitExit(current);
    current.kill(signal);
    const escalate = setTimeout(() => current.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(escalate);
  };
  return {
    name: spec.name,
    ip: spec.ip,
    port: spec.port,
    address: `${spec.ip}:${spec.port}`,
    get pid() {
      return child?.pid;
    },
    get running() {
      return child !== undefined;
    },
    async start() {
      if (child) return;
      spec.prepare?.();
      const [command, args] = spec.host
        ? spec.host.command([spec.command, ...spec.args])
        : [spec.command, [...spec.args]];
      const fd = openSync(spec.logFile, 'a');
      const started = spawn(command, args, { cwd: spec.cwd, stdio: ['ignore', fd, fd] });
      closeSync(fd);
      child = started;
      live.add(started);
      started.once('exit', () => live.delete(started));
      started.once('error', () => live.delete(started));
      const deadline = Date.now() + startTimeoutMs;
      while (Date.now() < deadline) {
        if (started.exitCode !== null || started.signalCode !== null) break;
        if (await spec.probe()) return;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await halt('SIGKILL');
      throw new Error(
        `${spec.name} did not start at ${spec.ip}:${spec.port} (log ${spec.logFile}):\n${logTail()}`,
      );
    },
    stop: () => halt('SIGTERM'),
    kill: () => halt('SIGKILL'),
    logTail,
  };
}

/** Sends `payload` on a fresh connection; collects the reply until the peer closes or `done` says so. */
export function tcpExchange(
  ip: string,
  port: number,
  payload: string,
  done: (reply: string) => boolean = () => false,
  timeoutMs = 1_000,
): Promise<string> {
  return new Promise((resolve) => {
    let reply = '';
    const socket = connect({ host: ip, port });
    const finish = (): void => {
      socket.destroy();
      resolve(reply);
    };
    socket.setTimeout(timeoutMs, finish);
    socket.on('connect', () => socket.write(payload));
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (done(reply)) finish();
    });
    socket.on('error', finish);
    socket.on('close', finish);
  });
}

/** An HTTP request's body when it answers 200, else undefined. */
export function httpBody(
  ip: string,
  port: number,
  path: string,
  body?: string,
  timeoutMs = 1_000,
): Promise<string | undefined> {
  return new Promise((resolve) => {
    const req = request(
      {
        host: ip,
        port,
        path,
        method: body === undefined ? 'GET' : 'POST',
        agent: false,
        headers: {
          connection: 'close',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
      },
      (res) => {
        let text = '';
        res.on('data', (chunk) => {
          text += chunk;
        });
        res.on('end', () => resolve(res.statusCode === 200 ? text : undefined));
        res.on('error', () => resolve(undefined));
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy());
    req.on('error', () => resolve(undefined));
    req.end(body);
  });
}

/** One RESP command (`*n $len arg ...`) and its first reply line(s), for probes. */
export function redisCommand(ip: string, port: number, ...args: string[]): Promise<string> {
  const payload = `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
  return tcpExchange(ip, port, payload, (reply) => isCompleteReply(reply));
}

/** Whether a RESP reply is complete (enough for the simple, bulk and small array replies probes read). */
function isCompleteReply(reply: string): boolean {
  if (reply.length === 0) return false;
  const type = reply[0];
  if (type === '+' || type === '-' || type === ':') return reply.includes('\r\n');
  if (type === '$') {
    const header = /^\$(-?\d+)\r\n/.exec(reply);
    if (!header) return false;
    const length = Number(header[1]);
    return length < 0 || Buffer.byteLength(reply) >= header[0].length + length + 2;
  }
  if (type === '*') {
    const header = /^\*(-?\d+)\r\n/.exec(reply);
    if (!header) return false;
    const count = Number(header[1]);
    if (count <= 0) return true;
    return (reply.slice(header[0].length).match(/\r\n/g)?.length ?? 0) >= count * 2;
  }
  return true;
}
