/**
 * A client of the worker benchmark: `heavy-client.ts <crunch|ping> <port> <calls> <concurrency>`, the
 * shared closed-loop driver, one JSON line ({@link ScenarioResult}) on stdout, a `MEASURE` line first.
 */
import { callisto } from '../../src/index.js';
import { MEASURE_START_LINE } from '../lib/client-main.js';
import { runScenario } from '../lib/driver.js';
import { HeavyBenchDef } from './heavy-service.js';

const [method, port, calls, concurrency] = process.argv.slice(2);
const app = await callisto({
  application: 'bench-heavy-client',
  logLevel: 'warn',
  load: { configFile: false, env: false },
});
const ref = app.refer(HeavyBenchDef, { url: `127.0.0.1:${port}`, timeoutMs: 60_000, retries: 0 });
const call = method === 'ping' ? () => ref.ping() : (i: number) => ref.crunch(i);
await call(1);
const result = await runScenario({
  call,
  calls: Number(calls),
  concurrency: Number(concurrency),
  warmupCalls: Math.ceil(Number(calls) * 0.05),
  onMeasureStart: () => process.stdout.write(`${MEASURE_START_LINE}\n`),
});
await app.close();
process.stdout.write(`${JSON.stringify(result)}\n`, () => process.exit(0));
