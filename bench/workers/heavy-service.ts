/**
 * The service of the worker benchmark (`npm run bench:workers`): `crunch(i)`, a fixed amount of CPU
 * work per call (about 1 ms on a quiet machine: BENCH_HEAVY_ROUNDS rounds of xorshift, default 250,000),
 * and `ping()`, which answers at once and always runs on the loop.
 */
import { defineService } from '../../src/index.js';

export interface HeavyBench {
  crunch(i: number): number;
  ping(): string;
}

export const HeavyBenchDef = defineService<HeavyBench>('bench.Heavy', {
  version: '1.0.0',
  methods: { crunch: {}, ping: { idempotent: true } },
});

const ROUNDS = Number(process.env['BENCH_HEAVY_ROUNDS'] ?? 250_000);

export const heavyBench: HeavyBench = {
  crunch(i) {
    let x = (2463534242 ^ i) >>> 0 || 1;
    for (let round = 0; round < ROUNDS; round++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
    }
    return x >>> 0;
  },
  ping: () => 'pong',
};
