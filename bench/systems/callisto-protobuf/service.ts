/** The bench service's definition with its protobuf messages (bench.proto). */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { defineService } from '../../../src/index.js';
import { BENCH_SERVICE_NAME, BENCH_SERVICE_VERSION, type BenchService } from '../../lib/scenarios.js';

export const benchRoot = protobuf.loadSync(
  path.join(path.dirname(fileURLToPath(import.meta.url)), 'bench.proto'),
);

export const ProtobufBenchServiceDef = defineService<BenchService>(BENCH_SERVICE_NAME, {
  version: BENCH_SERVICE_VERSION,
  methods: { say: { idempotent: true }, getUser: { idempotent: true } },
  protobuf: benchRoot,
});
