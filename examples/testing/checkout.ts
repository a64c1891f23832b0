/**
 * The code under test: a checkout that quotes the fees, then charges once. What it promises its callers,
 * whatever the payment providers do: an order is charged at most once, and a payment outage reads as
 * "try again later", not as a stack trace.
 */

import type { Remote } from '../../src/index.js';
import { RpcError } from '../../src/index.js';
import type { Payments } from './payments.js';

export type CheckoutResult = { ok: true; receipt: string; fees: number } | { ok: false; reason: string };

export function createCheckout(payments: Remote<Payments>) {
  return async (orderId: string, amount: number): Promise<CheckoutResult> => {
    try {
      const fees = await payments.quote(amount);
      const receipt = await payments.charge(orderId, amount + fees);
      return { ok: true, receipt, fees };
    } catch (error) {
      if (RpcError.is(error) && ['NoProvider', 'Overloaded', 'Network', 'Timeout'].includes(error.code)) {
        return { ok: false, reason: `payments unavailable (${error.code}): try again later` };
      }
      throw error;
    }
  };
}
