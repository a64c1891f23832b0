/** The contract of a payment service the checkout calls (shared with its providers). */
import { defineService } from '../../src/index.js';

export interface Payments {
  /** What `amount` costs in fees: read-only, safe to retry. */
  quote(amount: number): Promise<number>;
  /** Charges a card: must never run twice. */
  charge(orderId: string, amount: number): Promise<string>;
}

export const PaymentsDef = defineService<Payments>('shop.Payments', {
  version: '1.0.0',
  methods: { quote: { idempotent: true }, charge: {} },
});

/** A fake payment provider for tests: fees of 2 %, a receipt per charge. */
export function fakePayments(name: string): Payments & { charged: string[] } {
  const charged: string[] = [];
  return {
    charged,
    async quote(amount) {
      return Math.round(amount * 0.02);
    },
    async charge(orderId, amount) {
      charged.push(orderId);
      return `${name}:receipt:${orderId}:${amount}`;
    },
  };
}
