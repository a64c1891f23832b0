/**
 * The options of rate and concurrency limits (docs/governance.md), declared once and checked where they
 * are given (a value that is not a positive number fails `callisto()`, `provide()` or `refer()` with a
 * ConfigError naming the key):
 *
 * - provider (`server.limits` for the whole app, `provide(def, impl, { limits })` for a service,
 *   `methods: { m: { limits } }` for a method): `rate` (every caller together), `perApplication` (each
 *   consumer application: the authenticated identity when auth is on, else the application the consumer
 *   names with `consumer.sendApplication`), `perAddress` (each remote host), `executes` (calls executing
 *   at once; Dubbo's `executes`);
 * - consumer (`refer(def, { limits })` for a reference, `methods: { m: { limits } }` for a method):
 *   `rate` (calls a second) and `actives` (calls in flight; Dubbo's `actives`).
 */
import { z } from 'zod';

const tokenRateSchema = z.strictObject({
  kind: z.literal('token').optional(),
  perSecond: z.number().positive().finite(),
  burst: z.number().int().positive().optional(),
});

const rateLimitSchema = tokenRateSchema.describe(
  "{ perSecond: a number > 0, burst?: an integer > 0 } (a token bucket; kind 'leaky' is a provider limit)",
);

/**
 * A provider's rate: a token bucket (`kind: 'token'`, the default: a burst goes through at once, what
 * follows is refused `RateLimited`) or a leaky bucket (`kind: 'leaky'`: calls leave at a steady rate,
 * up to `queue` wait for their turn, the rest are refused `Overloaded`).
 */
const providerRateSchema = z
  .union([
    tokenRateSchema,
    z.strictObject({
      kind: z.literal('leaky'),
      perSecond: z.number().positive().finite(),
      queue: z.number().int().nonnegative().optional(),
    }),
  ])
  .describe(
    "{ perSecond: a number > 0, burst?: an integer > 0 } (token bucket) or { kind: 'leaky', perSecond: a number > 0, queue?: an integer >= 0 } (leaky bucket)",
  );

export const providerLimitsSchema = z
  .strictObject({
    rate: providerRateSchema,
    perApplication: providerRateSchema,
    perAddress: providerRateSchema,
    executes: z.number().int().positive(),
  })
  .partial();

export type ProviderLimits = z.infer<typeof providerLimitsSchema>;

export const consumerLimitsSchema = z
  .strictObject({
    rate: rateLimitSchema,
    actives: z.number().int().positive(),
  })
  .partial();

export type ConsumerLimits = z.infer<typeof consumerLimitsSchema>;

/** Whether `limits` limits anything (an empty object costs nothing). */
export function hasLimits(limits: ProviderLimits | ConsumerLimits | undefined): boolean {
  return limits !== undefined && Object.values(limits).some((value) => value !== undefined);
}
