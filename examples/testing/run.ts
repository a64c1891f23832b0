/**
 * Unit tests of the checkout (checkout.ts) with Callisto's test kit: two fake payment providers on an
 * in-memory network, no socket, no registry server; failures injected; the same cluster strategy
 * (failover), balancer and filters as in production. Each check prints one line; a failed check exits 1.
 *
 *   npx tsx examples/testing/run.ts
 */
import assert from 'node:assert/strict';
import { createTestKit } from '../../src/testing/index.js';
import { createCheckout } from './checkout.js';
import { fakePayments, PaymentsDef } from './payments.js';

async function check(name: string, body: () => Promise<void>): Promise<void> {
  const kit = createTestKit();
  try {
    await body.call(kit);
    console.log(`ok - ${name}`);
  } catch (error) {
    console.log(`not ok - ${name}: ${(error as Error).message}`);
    process.exitCode = 1;
  } finally {
    await kit.close();
  }
}

/** Two fake providers and a checkout calling them through a real reference (calls time out after `timeoutMs`). */
async function setup(kit: ReturnType<typeof createTestKit>, timeoutMs = 2_000) {
  const blue = fakePayments('blue');
  const green = fakePayments('green');
  const providers = {
    blue: await kit.provider(PaymentsDef, blue, { name: 'blue' }),
    green: await kit.provider(PaymentsDef, green, { name: 'green' }),
  };
  const app = await kit.consumer({ consumer: { timeoutMs } });
  return { providers, blue, green, checkout: createCheckout(app.refer(PaymentsDef)) };
}

await check('charges once and returns the receipt', async function (this: ReturnType<typeof createTestKit>) {
  const { checkout, blue, green } = await setup(this);
  const result = await checkout('o-1', 100);
  assert.deepEqual(result, { ok: true, receipt: 'blue:receipt:o-1:102', fees: 2 });
  assert.deepEqual([...blue.charged, ...green.charged], ['o-1']);
});

await check(
  'an overloaded provider: the quote fails over, the charge still happens once',
  async function (this: ReturnType<typeof createTestKit>) {
    const { checkout, providers, blue, green } = await setup(this);
    providers.blue.fail('*', 'Overloaded');
    const result = await checkout('o-2', 50);
    assert.equal(result.ok, true);
    assert.deepEqual([...blue.charged, ...green.charged], ['o-2']);
  },
);

await check(
  'a charge that times out is not retried (it may have run): try again later',
  async function (this: ReturnType<typeof createTestKit>) {
    const { checkout, providers, blue, green } = await setup(this, 500);
    providers.blue.delay('charge', 'forever');
    providers.green.delay('charge', 'forever');
    const result = await checkout('o-3', 10);
    assert.deepEqual(result, { ok: false, reason: 'payments unavailable (Timeout): try again later' });
    // never sent twice: at most one provider saw the charge, and none charged
    const attempts = [...providers.blue.calls, ...providers.green.calls].filter((c) => c.method === 'charge');
    assert.ok(attempts.length <= 1, `${attempts.length} charge attempts`);
    assert.deepEqual([...blue.charged, ...green.charged], []);
  },
);

await check('every provider down: try again later', async function (this: ReturnType<typeof createTestKit>) {
  const { checkout, providers } = await setup(this);
  await providers.blue.down();
  await providers.green.down();
  const result = await checkout('o-4', 10);
  assert.deepEqual(result, { ok: false, reason: 'payments unavailable (Network): try again later' });
});
