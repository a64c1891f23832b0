/**
 * The chain machinery (src/core/filter.ts): two forms (hooks and a step; a user's `filter` is made a
 * step), a run of hooks after a wrapping filter is one step that costs no promise of its own, and
 * filters are typed by the invocation they read, so a chain takes only filters its invocation fits
 * (`npm test` typechecks this file: each `@ts-expect-error` must stay an error).
 */
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compileChain, defineFilter, type NamedFilter, type Step } from '../../src/core/filter.js';
import type { Invocation } from '../../src/core/invocation.js';
import type { AdmittedInvocation } from '../../src/filters/admission.js';
import type { AttemptInvocation } from '../../src/filters/attempt-invocation.js';
import { endpointStatsFilter } from '../../src/filters/endpoint-stats.js';

interface Counted extends Invocation {
  count: number;
}

const invocation = (): Counted => ({
  service: { name: 'test.Chain', version: '1.0.0', group: '' },
  method: 'm',
  args: [],
  attachments: {},
  deadline: 0,
  signal: undefined,
  oneway: false,
  idempotent: true,
  count: 0,
});

const wrapping = (log: string[]) =>
  defineFilter<Counted>({
    name: 'wraps',
    position: 'call',
    order: 100,
    step: (next) => (call) => {
      log.push('wraps');
      return next(call);
    },
  });

const hook = (name: string, order: number, log: string[]) =>
  defineFilter<Counted>({
    name,
    position: 'call',
    order,
    start: (call) => {
      call.count++;
      log.push(`start ${name}`);
    },
    end: (_call, error) => {
      log.push(`end ${name}${error === undefined ? '' : ' failed'}`);
      queueMicrotask(() => log.push(`tick after ${name}`));
    },
  });

describe('compileChain', () => {
  it('runs the hooks at its head for the runner and a user filter as a step; names in running order', async () => {
    const log: string[] = [];
    const user = defineFilter({
      name: 'user',
      position: 'call',
      order: 600,
      filter: (next) => async (call) => {
        log.push('user');
        return next(call);
      },
    });
    const chain = compileChain<Counted>([user, wrapping(log), hook('head', 50, log)], () => 'done');
    expect(chain.names).toEqual(['head', 'wraps', 'user']);
    expect(chain.hooks.map((h) => h.name)).toEqual(['head']);
    const result = chain.rest(invocation());
    expect(result).toBeInstanceOf(Promise); // the user's filter answers with a promise, as Filter says
    expect(await result).toBe('done');
    expect(log).toEqual(['wraps', 'user']);
  });

  it('runs hooks after a wrapping filter without a promise while the rest answers without one', () => {
    const log: string[] = [];
    const chain = compileChain<Counted>(
      [wrapping(log), hook('a', 200, log), hook('b', 300, log)],
      (call) => `done ${call.count}`,
    );
    expect(chain.hooks).toEqual([]);
    expect(chain.rest(invocation())).toBe('done 2');
    expect(log).toEqual(['wraps', 'start a', 'start b', 'end b', 'end a']);
  });

  it('ends a run of hooks after a wrapping filter in one turn (one promise for the run) when the rest answers later', async () => {
    const log: string[] = [];
    const chain = compileChain<Counted>(
      [wrapping(log), hook('a', 200, log), hook('b', 300, log)],
      async () => 'later',
    );
    expect(await chain.rest(invocation())).toBe('later');
    await new Promise((resolve) => setImmediate(resolve));
    // one hook per promise would end `a` a turn after `b`, after b's microtask
    expect(log).toEqual(['wraps', 'start a', 'start b', 'end b', 'end a', 'tick after b', 'tick after a']);
  });

  it('refuses at a hook after a wrapping filter: the hooks that started end with the error, the rest never runs', () => {
    const log: string[] = [];
    const refuse = defineFilter<Counted>({
      name: 'refuse',
      position: 'call',
      order: 300,
      start: () => {
        throw new Error('no');
      },
    });
    const chain = compileChain<Counted>([wrapping(log), hook('a', 200, log), refuse], () => {
      log.push('terminal');
    });
    expect(() => chain.rest(invocation())).toThrow('no');
    expect(log).toEqual(['wraps', 'start a', 'end a failed']);
  });

  it("takes only filters whose invocation the chain's is (checked by tsc)", () => {
    const terminal: Step<Counted> = () => undefined;
    const counting: NamedFilter<Counted> = hook('counting', 100, []);
    const plain = defineFilter({ name: 'plain', position: 'call', start() {} });
    expect(compileChain([counting, plain], terminal).names).toEqual(['counting', 'plain']);
    const attempt: NamedFilter<AttemptInvocation> = endpointStatsFilter();
    // @ts-expect-error: an attempt filter reads what a Counted invocation does not have
    compileChain<Counted>([attempt], terminal);
    // @ts-expect-error: a filter that needs an admitted invocation does not fit a plain chain
    compileChain<Invocation>([{} as NamedFilter<AdmittedInvocation>], () => undefined);
    // @ts-expect-error: nor is it a filter a user gives at a position
    const entry: NamedFilter = attempt;
    expect(entry).toBe(attempt);
  });
});

describe('Callisto’s own filters', () => {
  it('declare the invocation they read instead of downcasting one', () => {
    const dir = path.resolve(import.meta.dirname, '../../src/filters');
    const casts = fs
      .readdirSync(dir)
      .filter((file) => file.endsWith('.ts'))
      .flatMap((file) =>
        fs
          .readFileSync(path.join(dir, file), 'utf8')
          .split('\n')
          .filter((line) => /\bas [A-Z]\w*Invocation\b|\binvocation as\b/.test(line))
          .map((line) => `${file}: ${line.trim()}`),
      );
    expect(casts).toEqual([]);
  });
});
