/**
 * The demo: three provider processes and one consumer on the embedded file registry.
 *   1. start three providers (separate processes) that register themselves
 *   2. the consumer discovers them and spreads calls over all three
 *   3. one provider is stopped gracefully; the consumer carries on with the other two, without errors
 * Run with `npm run demo`.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { callisto } from '../../src/index.js';
import { UserServiceDef } from '../contract/user-service.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const registryDir = fs.mkdtempSync(path.join(os.tmpdir(), 'callisto-demo-'));
const registry = `file://${registryDir}`;
const children: ChildProcess[] = [];

const running = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null;

function stopped(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => (running(child) ? child.once('exit', () => resolve()) : resolve()));
}

/**
 * Stops every provider still running: SIGTERM (a graceful shutdown), then SIGKILL for one that has not
 * exited 5 s later. The demo never exits before its providers are gone.
 */
async function reapChildren(): Promise<void> {
  await Promise.all(
    children.filter(running).map(async (child) => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await stopped(child);
      clearTimeout(timer);
    }),
  );
}

// Last resorts, for an exit that skips the `finally` below: a signal stops the providers before the demo
// goes, and any exit (an uncaught error too) kills what is left. Each provider also holds a lifeline,
// its stdin, to this process: when the demo goes, even killed with SIGKILL, the pipe closes and the
// provider shuts itself down.
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    void reapChildren().finally(() => process.exit(1));
  });
}
process.once('exit', () => {
  for (const child of children) if (running(child)) child.kill('SIGKILL');
});

function startProvider(name: string): Promise<{ child: ChildProcess; address: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(here, 'provider.ts')], {
    env: {
      ...process.env,
      PROVIDER_NAME: name,
      CALLISTO_REGISTRY: registry,
      CALLISTO_REGISTRY_TTL_MS: '3000',
      DEMO_LIFELINE: '1',
    },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      buffered += chunk.toString();
      const match = /READY (\S+)/.exec(buffered);
      if (match) resolve({ child, address: match[1]! });
    });
    child.once('exit', (code) => reject(new Error(`${name} exited early with code ${code}`)));
  });
}

function table(counts: Map<string, number>): string {
  return [...counts.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(
      ([name, count]) =>
        `    ${name.padEnd(12)} ${String(count).padStart(5)} calls  ${'#'.repeat(Math.round(count / 10))}`,
    )
    .join('\n');
}

async function spread(
  whoAmI: () => Promise<string>,
  calls: number,
  onProgress: (done: number) => void = () => {},
): Promise<{ counts: Map<string, number>; failed: number }> {
  const counts = new Map<string, number>();
  let failed = 0;
  for (let i = 0; i < calls; i += 10) {
    const answers = await Promise.allSettled(Array.from({ length: 10 }, () => whoAmI()));
    for (const answer of answers) {
      if (answer.status === 'fulfilled') counts.set(answer.value, (counts.get(answer.value) ?? 0) + 1);
      else failed++;
    }
    onProgress(i + 10);
  }
  return { counts, failed };
}

const consumerApp = await callisto({
  application: 'demo-consumer',
  registry,
  registryTtlMs: 3000,
  logLevel: 'warn',
});
try {
  console.log(`Callisto demo — embedded registry at ${registryDir}\n`);
  console.log('1. Starting three providers...');
  const providers = await Promise.all(['provider-a', 'provider-b', 'provider-c'].map(startProvider));
  for (const [i, p] of providers.entries()) {
    console.log(`   provider-${'abc'[i]} listening on ${p.address} (pid ${p.child.pid})`);
  }
  console.log(
    `   watch it live: npx callisto dashboard --registry ${registry}, then open http://127.0.0.1:7070/`,
  );

  const users = consumerApp.refer(UserServiceDef, { loadbalance: 'roundrobin' });
  const deadline = Date.now() + 10_000;
  const seen = new Set<string>();
  while (seen.size < 3 && Date.now() < deadline) seen.add(await users.whoAmI());

  console.log('\n2. Typed calls through the consumer proxy:');
  const user = await users.getUser(42);
  console.log(`   getUser(42) -> ${JSON.stringify(user)}`);
  console.log(`   joinedAt is a ${user.joinedAt.constructor.name} (types survive the wire)`);
  console.log(`   say("world") -> ${await users.say('world')}`);

  console.log('\n3. 300 calls, round robin over the three providers:');
  const first = await spread(() => users.whoAmI(), 300);
  console.log(table(first.counts));
  console.log(`    failed: ${first.failed}`);

  console.log('\n4. Stopping provider-b gracefully (SIGTERM) while calls keep flowing...');
  const victim = providers[1]!.child;
  // The stop comes a quarter of the way in: provider-b answers its share until then.
  const second = await spread(
    () => users.whoAmI(),
    600,
    (done) => done === 150 && victim.kill('SIGTERM'),
  );
  await stopped(victim);
  console.log(table(second.counts));
  console.log(`    failed: ${second.failed}`);

  console.log('\n5. After the stop, calls go to the two remaining providers:');
  const third = await spread(() => users.whoAmI(), 200);
  console.log(table(third.counts));
  console.log(`    failed: ${third.failed}`);
  const total = first.failed + second.failed + third.failed;
  console.log(total === 0 ? '\nDone: every call succeeded.' : `\nDone with ${total} failed calls.`);
  process.exitCode = total === 0 && !third.counts.has('provider-b') ? 0 : 1;
} finally {
  try {
    await consumerApp.close();
  } finally {
    await reapChildren();
    fs.rmSync(registryDir, { recursive: true, force: true });
    console.log('All providers stopped.');
  }
}
