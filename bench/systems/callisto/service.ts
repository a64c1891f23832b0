import { defineService } from '../../../src/index.js';
import { BENCH_SERVICE_NAME, BENCH_SERVICE_VERSION, type BenchService } from '../../lib/scenarios.js';

/** The bench service as a Callisto definition. */
export const BenchServiceDef = defineService<BenchService>(BENCH_SERVICE_NAME, {
  version: BENCH_SERVICE_VERSION,
  methods: { say: { idempotent: true }, getUser: { idempotent: true } },
});
