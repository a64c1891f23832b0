/**
 * The rules of the provider's orders are enforced, not only written (docs/filters.md, "Order"): a
 * provider filter ordered before `decode` has no arguments yet, and reading them there throws an error
 * that says so and names the order to take, instead of seeing an empty list.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { FILTER_ORDER } from '../../src/core/filter-order.js';
import { defineFilter, RpcError } from '../../src/index.js';
import { UserServiceDef, UserServiceImpl } from '../fixtures/user-service.js';
import { closeAll, testApp } from '../support/apps.js';

afterEach(closeAll);

describe('a provider filter before decode', () => {
  it('cannot read the arguments over the wire: args throws naming the order; above decode it sees them', async () => {
    const seen: string[] = [];
    const errors: unknown[] = [];
    const reader = (name: string, order: number) =>
      defineFilter({
        name,
        position: 'provider',
        order,
        start(invocation) {
          try {
            seen.push(`${name} ${JSON.stringify(invocation.args)}`);
          } catch (error) {
            errors.push(error);
            throw new RpcError('BadRequest', `${name} could not read the arguments`);
          }
        },
      });
    const provider = await testApp();
    provider.provide(UserServiceDef, new UserServiceImpl(), {
      filters: [reader('early', FILTER_ORDER.provider.auth)],
    });
    const late = await testApp();
    late.provide(UserServiceDef, new UserServiceImpl(), {
      filters: [reader('late', FILTER_ORDER.provider.decode + 1)],
    });
    await Promise.all([provider.start(), late.start()]);
    const consumer = await testApp();
    const early = consumer.refer(UserServiceDef, { url: provider.address!, cluster: 'failfast' });
    await expect(early.say('x')).rejects.toMatchObject({
      code: 'BadRequest',
      message: 'early could not read the arguments',
    });
    expect(errors).toHaveLength(1);
    expect(errors[0]).toBeInstanceOf(TypeError);
    expect((errors[0] as Error).message).toMatch(
      /UserService\.say: a provider filter read invocation\.args before the `decode` filter \(order 350\) decoded them; give it an order above 350/,
    );
    const seeing = consumer.refer(UserServiceDef, { url: late.address!, cluster: 'failfast' });
    expect(await seeing.say('y')).toBe('hello y');
    expect(seen).toEqual(['late ["y"]']);
  });
});
