/**
 * Several hosts on one machine: Linux network namespaces joined by a bridge, each with its own address
 * in a private /24 (10.213.K.0/24, K claimed per network), for tests that need real non-loopback
 * addresses, partitions and silent packet loss. Needs root and `ip` (iproute2).
 *
 *   root namespace:  bridge cmhb<K>, address 10.213.K.1 (the test process reaches every host through it)
 *   host <name>:     namespace cmh<K>-<name>, eth0 = 10.213.K.<n>, a veth pair whose other end
 *                    (cmh<K>h<n>) is a port of the bridge
 *
 * Idempotent and self-cleaning:
 * - K is claimed by creating the bridge (the kernel refuses a second one of that name), skipping any
 *   10.213.K.0/24 that an address or route of the machine already uses;
 * - the bridge's alias names its owner (pid and process start time); `createNetwork()` first sweeps the
 *   networks of owners that are gone (a failed or killed run): their processes, namespaces and bridge;
 * - `close()` removes everything, and a process 'exit' hook does the same for a run that ends without
 *   closing. A namespace whose bridge is gone is stale by construction (the bridge is created first and
 *   deleted last) and is swept too.
 *
 * Faults: `cut()` takes a host's bridge port down (everything to and from it is dropped silently, no
 * RST, no ICMP: the host's sockets stay open), `dropTo(address)` adds a blackhole route inside the host
 * (its packets to that address vanish, packets the other way still arrive). `tc netem` is not available
 * on every kernel (not on the project's machine), hence these two.
 */
import { execFile, execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

const ALIAS = 'callisto-multihost';
const PREFIX = 'cmh';
const SUBNET_BASE = '10.213';

export interface Host {
  readonly name: string;
  /** The namespace's name (`ip netns exec <netns> …`). */
  readonly netns: string;
  /** Its address on the bridge network. */
  readonly address: string;
  /** The veth end on the bridge, in the root namespace. */
  readonly link: string;
  /** `[command, args]` that runs `argv` inside this host. */
  command(argv: readonly string[]): [string, string[]];
  /** Runs `ip -n <netns> …` and returns its stdout. */
  ip(...args: string[]): Promise<string>;
  /** Adds another address to the host's interface (e.g. one to announce with `advertiseHost`). */
  addAddress(address: string): Promise<void>;
  /** Takes the host off the network, silently: its bridge port goes down. */
  cut(): Promise<void>;
  /** Puts it back. */
  heal(): Promise<void>;
  /** Drops this host's packets to `address` silently (a blackhole route); the other direction still works. */
  dropTo(address: string): Promise<void>;
  /** Removes a `dropTo`. */
  undropTo(address: string): Promise<void>;
}

export interface HostNetwork {
  /** `10.213.K`. */
  readonly subnet: string;
  /** The bridge's address in the root namespace (what the test process uses to reach the hosts). */
  readonly gateway: string;
  /** Creates a host (namespace, veth, address). Names: letters, digits and '-', at most 8 characters. */
  addHost(name: string): Promise<Host>;
  readonly hosts: readonly Host[];
  /** Kills processes left in the hosts, deletes the namespaces and the bridge. Idempotent. */
  close(): Promise<void>;
}

function run(command: string, args: readonly string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(command, args, { encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error) reject(new Error(`${command} ${args.join(' ')} failed: ${stderr.trim() || error.message}`));
      else resolve(stdout);
    });
    if (input !== undefined) child.stdin?.end(input);
  });
}

function runSync(command: string, args: readonly string[]): string {
  try {
    return execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
}

/** The start time of a process (field 22 of /proc/<pid>/stat), or undefined when it is gone. */
function processStart(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

const OWNER = `${ALIAS} pid=${process.pid} start=${processStart(process.pid) ?? '?'}`;

function ownerAlive(alias: string): boolean {
  const match = /pid=(\d+) start=(\S+)/.exec(alias);
  if (!match) return false;
  return processStart(Number(match[1])) === match[2];
}

/** Kills every process in a namespace and deletes it (sync: also used from the 'exit' hook). */
function removeNamespaceSync(netns: string): void {
  for (const pid of runSync('ip', ['netns', 'pids', netns]).split(/\s+/).filter(Boolean)) {
    try {
      process.kill(Number(pid), 'SIGKILL');
    } catch {
      // already gone
    }
  }
  runSync('ip', ['netns', 'del', netns]);
}

function namespaces(): string[] {
  return runSync('ip', ['netns', 'list'])
    .split('\n')
    .map((line) => line.split(' ')[0] ?? '')
    .filter((name) => name.startsWith(PREFIX));
}

interface BridgeInfo {
  name: string;
  alias: string;
}

function bridges(): BridgeInfo[] {
  const out = runSync('ip', ['-j', '-d', 'link', 'show', 'type', 'bridge']);
  if (!out.trim()) return [];
  return (JSON.parse(out) as Array<{ ifname: string; ifalias?: string }>)
    .filter((link) => link.ifname.startsWith(`${PREFIX}b`))
    .map((link) => ({ name: link.ifname, alias: link.ifalias ?? '' }));
}

const networkIndex = (bridge: string): string => bridge.slice(`${PREFIX}b`.length);

/**
 * Removes the networks of owners that are gone: their processes, namespaces and bridges. Namespaces are
 * listed before bridges, so a namespace created by a live owner after that listing is never taken.
 */
export function sweepStaleNetworks(): string[] {
  const listedNamespaces = namespaces();
  const listedBridges = bridges();
  const removed: string[] = [];
  const live = new Set<string>();
  for (const bridge of listedBridges) {
    if (bridge.alias.startsWith(ALIAS) && ownerAlive(bridge.alias)) live.add(networkIndex(bridge.name));
  }
  for (const netns of listedNamespaces) {
    const index = /^cmh(\d+)-/.exec(netns)?.[1];
    if (index !== undefined && live.has(index)) continue;
    removeNamespaceSync(netns);
    removed.push(netns);
  }
  for (const bridge of listedBridges) {
    if (live.has(networkIndex(bridge.name))) continue;
    // Without our alias: not ours, or being created this instant (one `ip -batch` adds it and names its
    // owner, so it is never seen without an alias for longer)
    if (!bridge.alias.startsWith(ALIAS)) continue;
    runSync('ip', ['link', 'del', bridge.name]);
    removed.push(bridge.name);
  }
  return removed;
}

/** Subnets (third octet) of 10.213.x.0/24 that an address or route of the machine already uses. */
function usedSubnets(): Set<number> {
  const used = new Set<number>();
  const text = `${runSync('ip', ['-4', 'addr'])}\n${runSync('ip', ['-4', 'route'])}`;
  for (const match of text.matchAll(/10\.213\.(\d+)\./g)) used.add(Number(match[1]));
  if (/10\.213\.0\.0\/16|10\.0\.0\.0\/8/.test(text)) for (let k = 0; k < 256; k++) used.add(k);
  return used;
}

const open = new Set<HostNetwork>();
let exitHook = false;

/** Creates a bridge network on a free 10.213.K.0/24 (sweeping stale networks first). */
export async function createNetwork(): Promise<HostNetwork> {
  if (process.getuid?.() !== 0) throw new Error('multi-host tests need root (network namespaces)');
  sweepStaleNetworks();
  if (!exitHook) {
    exitHook = true;
    process.on('exit', () => {
      for (const network of open) closeSync(network);
    });
  }
  const used = usedSubnets();
  const start = 1 + ((process.pid * 7) % 240);
  let index: number | undefined;
  let bridge = '';
  for (let i = 0; i < 240 && index === undefined; i++) {
    const k = 1 + ((start + i) % 240);
    if (used.has(k)) continue;
    bridge = `${PREFIX}b${k}`;
    try {
      // one batch: the bridge is named after its owner at once, and `ip` finishes it even if we die
      await run(
        'ip',
        ['-batch', '-'],
        [
          `link add ${bridge} type bridge`,
          `link set ${bridge} alias "${OWNER}"`,
          `addr add ${SUBNET_BASE}.${k}.1/24 dev ${bridge}`,
          `link set ${bridge} up`,
          '',
        ].join('\n'),
      );
      index = k;
    } catch (error) {
      // taken by another run (the batch stops at `link add`): next; anything else is ours to undo
      if (!/File exists/.test((error as Error).message)) runSync('ip', ['link', 'del', bridge]);
    }
  }
  if (index === undefined) throw new Error('no free 10.213.x.0/24 for a test network');
  const subnet = `${SUBNET_BASE}.${index}`;
  const hosts: Host[] = [];
  let nextHost = 2;
  let closed = false;

  const network: HostNetwork & { bridge: string; index: number } = {
    subnet,
    gateway: `${subnet}.1`,
    bridge,
    index,
    get hosts() {
      return hosts;
    },
    async addHost(name) {
      if (!/^[a-z0-9-]{1,8}$/.test(name)) throw new Error(`host name "${name}": a-z, 0-9, '-', 1-8 chars`);
      if (closed) throw new Error('network closed');
      const n = nextHost++; // taken before any await: hosts may be added concurrently
      if (n > 99) throw new Error('at most 98 hosts per network');
      const netns = `${PREFIX}${index}-${name}`;
      const link = `${PREFIX}${index}h${n}`;
      const address = `${subnet}.${n}`;
      try {
        await run('ip', ['netns', 'add', netns]);
        await run('ip', ['link', 'add', link, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', netns]);
        await run('ip', ['link', 'set', link, 'master', bridge, 'up']);
        await run('ip', ['-n', netns, 'addr', 'add', `${address}/24`, 'dev', 'eth0']);
        await run('ip', ['-n', netns, 'link', 'set', 'eth0', 'up']);
        await run('ip', ['-n', netns, 'link', 'set', 'lo', 'up']);
      } catch (error) {
        removeNamespaceSync(netns);
        runSync('ip', ['link', 'del', link]);
        throw error;
      }
      const host: Host = {
        name,
        netns,
        address,
        link,
        command: (argv) => ['ip', ['netns', 'exec', netns, ...argv]],
        ip: (...args) => run('ip', ['-n', netns, ...args]),
        async addAddress(extra) {
          await run('ip', ['-n', netns, 'addr', 'add', `${extra}/24`, 'dev', 'eth0']);
        },
        async cut() {
          await run('ip', ['link', 'set', link, 'down']);
        },
        async heal() {
          await run('ip', ['link', 'set', link, 'up']);
        },
        async dropTo(target) {
          await run('ip', ['-n', netns, 'route', 'replace', 'blackhole', `${target}/32`]);
        },
        async undropTo(target) {
          await run('ip', ['-n', netns, 'route', 'del', 'blackhole', `${target}/32`]);
        },
      };
      hosts.push(host);
      return host;
    },
    async close() {
      if (closed) return;
      closed = true;
      open.delete(network);
      closeSync(network);
    },
  };
  open.add(network);
  return network;
}

function closeSync(network: HostNetwork & { bridge?: string; index?: number }): void {
  for (const netns of namespaces()) {
    if (netns.startsWith(`${PREFIX}${network.index}-`)) removeNamespaceSync(netns);
  }
  if (network.bridge) runSync('ip', ['link', 'del', network.bridge]);
}
