/**
 * Routing rules end to end, the same cases on every registry kind it runs on (file, etcd): six provider
 * processes of one service with different tags, versions and zones, a consumer app in zone a, and the
 * rules written through the registry's runtime control (compare-and-set of the override record):
 *
 *   name  zone  version  tag
 *   a1    a     1.0.0    -
 *   a2    a     1.0.0    -
 *   a3    a     2.0.0    gray
 *   b1    b     1.0.0    -
 *   b2    b     2.0.0    -
 *   b3    b     1.0.0    gray   (tenant acme)
 *
 * Zones come from `server.zone`, versions and tags from `provide(…, { tags })`. The zone case kills
 * providers (SIGKILL: their records stay until their TTL, as after a crash) and so runs last.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appInternals } from '../../src/app/internals.js';
import { runCli } from '../../src/cli/run-cli.js';
import { type CallistoApp, RpcError, withOptions } from '../../src/index.js';
import { createRegistryControl, type RegistryControl, type RouteRule } from '../../src/registry/index.js';
import { closeAll, testApp } from '../support/apps.js';
import { waitFor } from '../support/wait-for.js';
import { routedService } from './fixtures/routed-service.js';
import { killAll, type RoutedProcess, startRouted } from './processes.js';
import { SIX } from './support.js';

export interface RoutingTarget {
  readonly kind: string;
  /** The registry address (without query). */
  address(): string;
}

type Remote = {
  who(): Promise<string>;
  read(key: string): Promise<string>;
  write(key: string): Promise<string>;
};

/** Counts the answers of `n` calls (`concurrency` at a time) by provider name. */
async function spread(
  call: () => Promise<string>,
  n: number,
  concurrency = 16,
): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) {
        next++;
        const name = await call();
        counts[name] = (counts[name] ?? 0) + 1;
      }
    }),
  );
  return counts;
}

const names = (counts: Record<string, number>) => Object.keys(counts).sort();

/** Runs the CLI in this process; stdout and stderr as text. */
async function cli(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const sink = (append: (text: string) => void) =>
    ({
      write: (chunk: string | Uint8Array) => {
        append(String(chunk));
        return true;
      },
    }) as unknown as NodeJS.WritableStream;
  const code = await runCli(args, {
    stdout: sink((t) => {
      stdout += t;
    }),
    stderr: sink((t) => {
      stderr += t;
    }),
    env: { NO_COLOR: '1' },
  });
  return { code, stdout, stderr };
}

export function runRoutingSuite(target: RoutingTarget): void {
  const service = `routing.Svc${randomUUID().slice(0, 8)}`;
  const definition = routedService(service);
  let providers: RoutedProcess[] = [];
  let consumer: CallistoApp;
  let ref: Remote;
  let control: RegistryControl;
  const byName = (name: string) => providers.find((p) => p.name === name)!;

  /** Writes the rules (replacing any) and waits until the consumer's directory has them. */
  const setRules = async (rules: RouteRule[]): Promise<void> => {
    for (const rule of await control.routes(service)) await control.removeRoute(service, rule.name);
    for (const rule of rules) await control.setRoute(service, rule);
    const want = JSON.stringify(rules.map((r) => r.name).sort());
    await waitFor(
      () => {
        const directory = [...appInternals(consumer).consumer.directories().entries()].find(([key]) =>
          key.includes(service),
        )?.[1];
        return (
          directory !== undefined &&
          JSON.stringify(directory.routes.map((r: RouteRule) => r.name).sort()) === want
        );
      },
      10_000,
      { message: `the consumer follows the rules ${want}` },
    );
  };

  beforeAll(async () => {
    const registry = target.address();
    providers = await Promise.all(
      SIX.map(({ name, tags }) =>
        startRouted({
          name,
          service,
          registry,
          zone: tags['zone']!,
          tags: Object.fromEntries(Object.entries(tags).filter(([key]) => key !== 'zone')),
        }),
      ),
    );
    consumer = await testApp({
      application: 'web',
      registry: [`${registry}${registry.includes('?') ? '&' : '?'}overridePoll=50`],
      consumer: { snapshotDir: '', zone: 'a', warmupMs: 0 },
    });
    ref = consumer.refer(definition) as unknown as Remote;
    await waitFor(async () => names(await spread(() => ref.who(), 60)).length === 4, 15_000, {
      message: 'the consumer sees the four untagged providers',
    });
    control = createRegistryControl(registry);
  }, 90_000);

  afterAll(async () => {
    await control?.clear(service).catch(() => {});
    await control?.close();
    await closeAll();
    await killAll();
  });

  describe(`routing rules on ${target.kind}`, () => {
    it('tag routing: a tag to its providers, else untagged ones; forced, no fallback', async () => {
      // no rule: the tagged providers alone turn tag routing on
      expect(names(await spread(() => ref.who(), 200))).toEqual(['a1', 'a2', 'b1', 'b2']);
      const gray = consumer.refer(definition, { tag: 'gray' }) as unknown as Remote;
      expect(names(await spread(() => gray.who(), 100))).toEqual(['a3', 'b3']);
      // per call, and as the bare attachment (what inheritance carries from a served call)
      expect(names(await spread(() => withOptions(ref, { tag: 'gray' }).who(), 100))).toEqual(['a3', 'b3']);
      const viaAttachment = withOptions(ref, { attachments: { 'callisto-tag': 'gray' } });
      expect(names(await spread(() => viaAttachment.who(), 100))).toEqual(['a3', 'b3']);
      // a tag nobody has: the untagged providers
      expect(names(await spread(() => withOptions(ref, { tag: 'blue' }).who(), 200))).toEqual([
        'a1',
        'a2',
        'b1',
        'b2',
      ]);

      await setRules([{ name: 'strict-tags', kind: 'tag', force: true }]);
      const refused = await withOptions(ref, { tag: 'blue' })
        .who()
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(RpcError.is(refused) && refused.code).toBe('NoProvider');
      expect((refused as Error).message).toMatch(/rule strict-tags left none/);
      expect(names(await spread(() => gray.who(), 100))).toEqual(['a3', 'b3']);
      await setRules([]);
    });

    it('condition rules: `method = read & application = web => version = 2.*`, forced or not', async () => {
      await setRules([
        {
          name: 'web-reads-v2',
          kind: 'condition',
          rule: 'method = read & application = web => version = 2.*',
        },
      ]);
      // conditions come first, then tags: of a3 and b2 (version 2), a3 is tagged gray
      expect(names(await spread(() => ref.read('k'), 200))).toEqual(['b2']);
      expect(names(await spread(() => ref.who(), 200))).toEqual(['a1', 'a2', 'b1', 'b2']);
      // an argument match and a tenant label
      await setRules([
        { name: 'acme', kind: 'condition', rule: 'arguments[0] = acme-* => tags[tenant] = acme' },
      ]);
      const acme = consumer.refer(definition, { tag: 'gray' }) as unknown as Remote;
      expect(names(await spread(() => acme.read('acme-7'), 100))).toEqual(['b3']);
      expect(names(await spread(() => acme.read('other'), 100))).toEqual(['a3', 'b3']);
      await setRules([]);
    });

    it('broadcast calls and sticky references follow the rules too', async () => {
      const everyone = consumer.refer(definition, { cluster: 'broadcast' }) as unknown as {
        who(): Promise<string[]>;
      };
      expect((await everyone.who()).sort()).toEqual(['a1', 'a2', 'b1', 'b2']);
      const sticky = consumer.refer(definition, { sticky: true }) as unknown as Remote;
      const first = await sticky.who();
      expect(names(await spread(() => sticky.who(), 50, 1))).toEqual([first]);
      await setRules([
        { name: 'not-first', kind: 'condition', rule: `=> application != ${first} & zone = b` },
      ]);
      expect((await everyone.who()).sort()).toEqual(['b1', 'b2'].filter((name) => name !== first));
      const second = await sticky.who();
      expect(second).not.toBe(first);
      expect(names(await spread(() => sticky.who(), 50, 1))).toEqual([second]);
      await setRules([]);
    });

    it('a 90/10 split between versions over 10,000 calls, within ±1%', async () => {
      await setRules([
        {
          name: 'canary',
          kind: 'weight',
          split: [
            { to: 'version = 1.*', weight: 90 },
            { to: 'version = 2.*', weight: 10 },
          ],
        },
      ]);
      const counts = await spread(() => ref.who(), 10_000, 32);
      const v1 = (counts['a1'] ?? 0) + (counts['a2'] ?? 0) + (counts['b1'] ?? 0);
      const v2 = counts['b2'] ?? 0;
      expect(v1 + v2).toBe(10_000);
      // by turns, the split is exact per consumer; ±1% leaves room for failover retries
      expect(Math.abs(v2 - 1_000)).toBeLessThanOrEqual(100);
      await setRules([]);
    }, 120_000);

    it('changes rules under load without a failed call', async () => {
      let stop = false;
      let failures: unknown[] = [];
      let calls = 0;
      const load = Promise.all(
        Array.from({ length: 8 }, async () => {
          while (!stop) {
            try {
              await ref.write('x');
              calls++;
            } catch (error) {
              failures.push(error);
              // a broken stage fails every call at once: stop before the failures fill the memory
              if (failures.length >= 20) stop = true;
            }
          }
        }),
      );
      try {
        const plans: RouteRule[][] = [
          [{ name: 'v2', kind: 'condition', rule: 'method = write => version = 2.*' }],
          [
            {
              name: 'split',
              kind: 'weight',
              split: [
                { to: 'zone = a', weight: 50 },
                { to: 'zone = b', weight: 50 },
              ],
            },
          ],
          [{ name: 'local', kind: 'zone' }],
          // rules that leave no provider unless they fall back: a condition matching none, a side of
          // a split in a zone nobody is in
          [
            { name: 'no-rack', kind: 'condition', rule: 'method = write => tags[rack] = r9' },
            {
              name: 'c-or-b',
              kind: 'weight',
              split: [
                { to: 'zone = c', weight: 50 },
                { to: 'zone = b', weight: 50 },
              ],
            },
          ],
          [
            { name: 'strict', kind: 'tag', force: true },
            { name: 'b-only', kind: 'condition', rule: '=> zone = b' },
          ],
          [],
        ];
        for (let round = 0; round < 2; round++) {
          for (const plan of plans) {
            const before = calls;
            await setRules(plan);
            await waitFor(() => calls > before + 50 || stop, 10_000, { message: 'calls go on' });
          }
        }
      } finally {
        stop = true;
        await load;
      }
      expect(calls).toBeGreaterThan(500);
      expect(failures.map((error) => (error as Error).message)).toEqual([]);
      failures = [];
    }, 120_000);

    it('two writers setting rules at once lose no rule (compare-and-set)', async () => {
      const writers = [createRegistryControl(target.address()), createRegistryControl(target.address())];
      try {
        // each writer adds its rules one after the other, the two at the same time: every write of one
        // races one of the other's on the same record
        await Promise.all(
          writers.map(async (writer, w) => {
            for (let i = 0; i < 8; i++) {
              await writer.setRoute(service, {
                name: `w${w}-${i}`,
                kind: 'condition',
                rule: `arguments[0] = w${w}-${i} => zone = b`,
              });
            }
          }),
        );
        const stored = (await control.routes(service)).map((rule) => rule.name).sort();
        expect(stored).toEqual(
          [
            ...Array.from({ length: 8 }, (_, i) => `w0-${i}`),
            ...Array.from({ length: 8 }, (_, i) => `w1-${i}`),
          ].sort(),
        );
      } finally {
        await Promise.all(writers.map((writer) => writer.close()));
        await setRules([]);
      }
    }, 60_000);

    it('`callisto route set|ls|explain|rm`, and a rule with a mistake refused at its character', async () => {
      const registry = ['--registry', target.address()];
      const set = await cli([
        'route',
        'set',
        service,
        'v1-reads',
        '--condition',
        'method = read => version = 1.*',
        ...registry,
      ]);
      expect(set.stderr).toBe('');
      expect(set.code).toBe(0);
      expect(set.stdout).toMatch(/rule v1-reads set/);
      expect(
        (await cli(['route', 'set', service, 'local', '--zone', '--threshold', '0.7', ...registry])).code,
      ).toBe(0);
      const ls = await cli(['route', 'ls', service, ...registry]);
      expect(ls.stdout).toMatch(/v1-reads\s+condition\s+method = read => version = 1\.\*/);
      expect(ls.stdout).toMatch(/local\s+zone\s+local zone first, threshold 0\.7, panic below 0\.5/);

      const explain = await cli([
        'route',
        'explain',
        service,
        '--method',
        'read',
        '--tag',
        'gray',
        '--zone',
        'a',
        ...registry,
      ]);
      expect(explain.code).toBe(0);
      const lines = explain.stdout.trim().split('\n');
      const at = (name: string) => byName(name).address;
      expect(lines[0]).toBe(`call ${service}.read tag gray in zone a`);
      expect(lines).toContain(
        '1. condition v1-reads: applied: the call matches method = read: providers matching version = 1.*',
      );
      expect(lines).toContain(`   dropped ${at('a3')}: does not match version = 1.*`);
      expect(lines).toContain(`   dropped ${at('b2')}: does not match version = 1.*`);
      expect(lines).toContain("2. tag (tags): applied: the call's tag is gray: providers tagged gray");
      expect(lines).toContain(`   dropped ${at('a1')}: untagged`);
      expect(lines).toContain(`   kept ${at('b3')}`);
      expect(lines).toContain('3. zone local: not applied: no provider is in zone a');
      expect(lines.at(-1)).toBe(`outcome: the balancer chooses among ${at('b3')}`);

      const json = JSON.parse(
        (await cli(['route', 'explain', service, '--method', 'who', '--zone', 'a', '--json', ...registry]))
          .stdout,
      );
      expect(json.steps.map((step: { rule: string; applied: boolean }) => [step.rule, step.applied])).toEqual(
        [
          ['v1-reads', false],
          ['(tags)', true],
          ['local', true],
        ],
      );
      expect([...json.result].sort()).toEqual([at('a1'), at('a2')].sort());

      const bad = await cli([
        'route',
        'set',
        service,
        'oops',
        '--condition',
        'method = read => verson = 2',
        ...registry,
      ]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('  method = read => verson = 2\n                   ^\n');
      expect(bad.stderr).toMatch(
        /error: rule oops: rule: unknown provider key "verson" \(known: .*\) at character 18\n$/,
      );
      expect((await cli(['route', 'rm', service, 'v1-reads', ...registry])).code).toBe(0);
      expect((await cli(['route', 'rm', service, 'v1-reads', ...registry])).code).toBe(1);
      await setRules([]);
    }, 60_000);

    it('zone routing: local first, spill-over in proportion when local providers are killed, then away', async () => {
      await setRules([{ name: 'local', kind: 'zone', threshold: 0.7, panicThreshold: 0.3 }]);
      // untagged calls: a1, a2 local; b1, b2 in zone b
      expect(names(await spread(() => ref.who(), 300))).toEqual(['a1', 'a2']);
      await byName('a1').kill();
      // a1's record stays (a crash): zone a is half healthy, below 0.7: 0.5/0.7 of the calls stay
      await waitFor(async () => (await spread(() => ref.who(), 50))['a1'] === undefined, 10_000);
      const spilled = await spread(() => ref.who(), 1_400);
      expect(spilled['a1']).toBeUndefined();
      expect(Math.abs((spilled['a2'] ?? 0) - 1_000)).toBeLessThanOrEqual(70);
      expect((spilled['b1'] ?? 0) + (spilled['b2'] ?? 0)).toBeGreaterThan(300);
      await byName('a2').kill();
      await waitFor(
        async () => names(await spread(() => ref.who(), 50)).every((n) => n.startsWith('b')),
        10_000,
      );
      expect(names(await spread(() => ref.who(), 300))).toEqual(['b1', 'b2']);
    }, 60_000);
  });
}
