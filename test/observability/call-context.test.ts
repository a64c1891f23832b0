/**
 * The call context past the first await: with `asyncCallContext: true`, `callContext()` answers after
 * awaits, in timers the method starts, and in a second call served at the same time (each sees its
 * own); without it, only the synchronous part sees it (the cheaper default).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { callContext, defineService } from '../../src/index.js';
import { closeAll, testApp } from '../support/apps.js';

interface Echo {
  later(
    tag: string,
  ): Promise<{ before: string | undefined; after: string | undefined; timer: string | undefined }>;
}
const EchoDef = defineService<Echo>('test.Echo', { methods: { later: {} } });

afterEach(closeAll);

const impl: Echo = {
  async later() {
    const before = callContext()?.attachments.tag;
    await new Promise((resolve) => setTimeout(resolve, 5));
    const after = callContext()?.attachments.tag;
    const timer = await new Promise<string | undefined>((resolve) =>
      setTimeout(() => resolve(callContext()?.attachments.tag), 1),
    );
    return { before, after, timer };
  },
};

async function serve(asyncCallContext: boolean) {
  const provider = await testApp({ asyncCallContext });
  provider.provide(EchoDef, impl);
  await provider.start();
  const consumer = await testApp();
  const tagged = (tag: string) => consumer.refer(EchoDef, { url: provider.address!, attachments: { tag } });
  return tagged;
}

describe('call context', () => {
  it('reaches code after the first await with asyncCallContext, each call its own', async () => {
    const tagged = await serve(true);
    const [a, b] = await Promise.all([tagged('a').later('a'), tagged('b').later('b')]);
    expect(a).toEqual({ before: 'a', after: 'a', timer: 'a' });
    expect(b).toEqual({ before: 'b', after: 'b', timer: 'b' });
  });

  it('is the synchronous part only by default', async () => {
    const tagged = await serve(false);
    expect(await tagged('a').later('a')).toEqual({ before: 'a', after: undefined, timer: undefined });
  });
});
