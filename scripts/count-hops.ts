/**
 * Counts the hops of one steady-state call, as docs/architecture.md reports them, two ways:
 *
 * - **calls**: every invocation of a function of Callisto's own source (`src/`) while the call runs,
 *   counted by V8's precise coverage (call counts), split into segments at fixed points of the call;
 * - **files**: how many `src/` files those functions are in;
 * - **stack**: the `src/` frames on the stack at those points (a stack trace).
 *
 * The points are where a serializer runs, so the count needs no hook inside Callisto: a probe
 * serializer (registered through the public extension API) marks the consumer encoding the arguments
 * (the end of the consumer's request side), the provider decoding them, the implementation, the provider
 * encoding the result and the consumer decoding the answer; the last segment ends when the caller's
 * `await` resumes. Functions of Node, of dependencies and of this script are not counted.
 *
 *   npx tsx scripts/count-hops.ts            # prints the table
 *   npx tsx scripts/count-hops.ts --stacks   # and the functions and frames themselves
 */
import { Session } from 'node:inspector';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { callisto, defineService, type Serializer } from '../src/index.js';

Error.stackTraceLimit = 200;
const srcDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../src');

declare module '../src/index.js' {
  interface SerializerNames {
    probe: true;
  }
}

type Point =
  | 'consumer: request encoded'
  | 'provider: arguments decoded'
  | 'provider: implementation'
  | 'provider: result encoded'
  | 'consumer: answer decoded';

/** The frames of `src/` in a stack trace, innermost first. */
function srcFrames(stack: string): string[] {
  return stack
    .split('\n')
    .slice(1)
    .filter((line) => line.includes(srcDir))
    .map((line) => line.trim().replace(srcDir, 'src'));
}

interface CoverageFunction {
  functionName: string;
  ranges: Array<{ startOffset: number; count: number }>;
}
interface CoverageScript {
  url: string;
  functions: CoverageFunction[];
}

const session = new Session();
session.connect();
const post = (method: string, params: object = {}): unknown => {
  let result: unknown;
  let failure: unknown;
  session.post(method, params, (error, value) => {
    failure = error;
    result = value;
  });
  if (failure) throw failure;
  return result;
};
post('Profiler.enable');
post('Profiler.startPreciseCoverage', { callCount: true, detailed: false });

/** Calls of `src/` functions since the last take (taking resets the counters). */
function takeCalls(): string[] {
  const { result } = post('Profiler.takePreciseCoverage') as { result: CoverageScript[] };
  const calls: string[] = [];
  for (const script of result) {
    if (!script.url.includes(srcDir)) continue;
    const file = script.url.slice(script.url.indexOf(srcDir) + srcDir.length + 1);
    for (const fn of script.functions) {
      const count = fn.ranges[0]?.count ?? 0;
      if (count > 0 && fn.functionName !== '') calls.push(`${file} ${fn.functionName} x${count}`);
      else if (count > 0) calls.push(`${file} (anonymous @${fn.ranges[0]!.startOffset}) x${count}`);
    }
  }
  return calls;
}
const countOf = (calls: string[]): number =>
  calls.reduce((sum, call) => sum + Number(call.slice(call.lastIndexOf(' x') + 2)), 0);

let armed = false;
const captured = new Map<Point, string[]>();
const calledBefore = new Map<Point, string[]>();
const capture = (point: Point): void => {
  if (!armed || captured.has(point)) return;
  calledBefore.set(point, takeCalls());
  captured.set(point, srcFrames(new Error().stack ?? ''));
};

function probeSerializer(side: 'consumer' | 'provider'): Serializer {
  return {
    id: 77,
    name: 'probe',
    encode(value) {
      capture(side === 'consumer' ? 'consumer: request encoded' : 'provider: result encoded');
      return Buffer.from(JSON.stringify(value ?? null));
    },
    decode(bytes) {
      capture(side === 'consumer' ? 'consumer: answer decoded' : 'provider: arguments decoded');
      return JSON.parse(Buffer.from(bytes).toString('utf8'));
    },
  };
}

interface Probe {
  say(message: string): Promise<string>;
}
const ProbeDef = defineService<Probe>('hops.Probe', { methods: { say: { idempotent: true } } });
const quiet = { logLevel: 'warn' as const, load: { configFile: false as const, env: false as const } };

const provider = await callisto({
  ...quiet,
  server: { serializers: ['probe'] },
  extend: (extensions) => extensions.register('serializer', 'probe', probeSerializer('provider')),
});
provider.provide(ProbeDef, {
  async say(message) {
    capture('provider: implementation');
    return `hello ${message}`;
  },
});
await provider.start();
const consumer = await callisto({
  ...quiet,
  extend: (extensions) => extensions.register('serializer', 'probe', probeSerializer('consumer')),
});
const ref = consumer.refer(ProbeDef, { url: provider.address!, serializer: 'probe' });
for (let i = 0; i < 50; i++) await ref.say('warm');
takeCalls();
armed = true;
await ref.say('counted');
armed = false;
const afterAnswer = takeCalls();
await consumer.close();
await provider.close();

const order: Point[] = [
  'consumer: request encoded',
  'provider: arguments decoded',
  'provider: implementation',
  'provider: result encoded',
  'consumer: answer decoded',
];
const segments: Array<[string, string[]]> = order.map((point, i) => [
  `${i === 0 ? 'proxy call' : order[i - 1]} -> ${point}`,
  calledBefore.get(point) ?? [],
]);
segments.push([`${order[order.length - 1]} -> caller resumes`, afterAnswer]);
let totalCalls = 0;
const filesOf = (calls: string[]): Set<string> =>
  new Set(calls.map((call) => call.slice(0, call.indexOf(' '))));
const allFiles = new Set<string>();
console.log('| segment | src function calls | in src files | src frames on the stack at its end |');
console.log('|---|---|---|---|');
segments.forEach(([label, calls], i) => {
  const count = countOf(calls);
  totalCalls += count;
  const files = filesOf(calls);
  for (const file of files) allFiles.add(file);
  const frames = i < order.length ? String(captured.get(order[i]!)?.length ?? 0) : '';
  console.log(`| ${label} | ${count} | ${files.size} | ${frames} |`);
});
console.log(`| total | ${totalCalls} | ${allFiles.size} | |`);
if (process.argv.includes('--stacks')) {
  segments.forEach(([label, calls], i) => {
    console.log(`\n${label}:\n  calls: ${calls.join(', ')}`);
    if (i < order.length) for (const frame of captured.get(order[i]!) ?? []) console.log(`  ${frame}`);
  });
}
session.disconnect();
