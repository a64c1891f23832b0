/**
 * How much a call matters when the provider is at its adaptive concurrency limit
 * (docs/operations.md, "Overload protection"): `sheddable` calls are refused first, `critical` ones may
 * go beyond the limit by a margin. A method declares it (`defineService(…, { methods: { m: { priority } } })`);
 * a call may say it itself in the `callisto-priority` attachment (`withOptions(ref, { priority })`), which
 * wins over the method's. An unknown value in an attachment counts as `default`.
 */

export type CallPriority = 'critical' | 'default' | 'sheddable';

export const CALL_PRIORITIES: readonly CallPriority[] = ['critical', 'default', 'sheddable'];

/** The attachment a call's own priority travels in. */
export const PRIORITY_ATTACHMENT = 'callisto-priority';

export function isCallPriority(value: unknown): value is CallPriority {
  return value === 'critical' || value === 'default' || value === 'sheddable';
}
