import { defineService } from '../../../src/index.js';
import {
  BENCH_SERVICE_NAME,
  BENCH_SERVICE_VERSION,
  type BenchBytesService,
  type BenchService,
  type BenchStreamService,
} from '../../lib/scenarios.js';

/** The bench service as a Callisto definition. */
export const BenchServiceDef = defineService<BenchService>(BENCH_SERVICE_NAME, {
  version: BENCH_SERVICE_VERSION,
  methods: { say: { idempotent: true }, getUser: { idempotent: true } },
});

/**
 * The bench service with its server stream, `ticks` (scenarios S6 to S8), and `echoBytes` (S4):
 * served by `callisto` only.
 */
export const BenchStreamingServiceDef = defineService<BenchService & BenchStreamService & BenchBytesService>(
  BENCH_SERVICE_NAME,
  {
    version: BENCH_SERVICE_VERSION,
    methods: {
      say: { idempotent: true },
      getUser: { idempotent: true },
      echoBytes: { idempotent: true },
      ticks: { stream: 'server' },
    },
  },
);
