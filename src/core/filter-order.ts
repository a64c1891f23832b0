/**
 * The order of every filter Callisto places, by position and name: the one place an order number is
 * written in `src/`. A built-in filter's `order:` line names its entry (`FILTER_ORDER.provider.auth`),
 * docs/filters.md's table of filters is generated from this table (`npm run docs:filters`,
 * scripts/filter-docs.ts), and the chain's rules read their orders here (core/filter.ts: only hooks
 * between `admission` and `decode`; a provider filter before `decode` has no arguments yet).
 *
 * Each entry says when the filter is in the chain (`when`), what it does (`does`, markdown, for the
 * docs) and its form (`hooks`, `wraps`, or `hooks or wraps` when its configuration decides). `user` is
 * where a user filter that names no order goes. Equal orders keep the order filters were given in.
 */
/** Where a filter runs: `provider` (on the provider), `call` and `attempt` (on the consumer). */
export type FilterPosition = 'provider' | 'call' | 'attempt';

export const FILTER_POSITIONS: readonly FilterPosition[] = ['provider', 'call', 'attempt'];

export type FilterForm = 'hooks' | 'wraps' | 'hooks or wraps';

export interface FilterOrderEntry {
  readonly order: number;
  /** When the filter is in the chain (a filter that is not configured is not there at all). */
  readonly when: string;
  /** What it does, for docs/filters.md. */
  readonly does: string;
  readonly form: FilterForm;
}

/** The order of a user filter that names none, at every position. */
const USER = 500;

const user: FilterOrderEntry = {
  order: USER,
  when: 'a filter you give that names no `order`',
  does: '',
  form: 'hooks or wraps',
};

const provider = {
  'metrics-server': {
    order: 50,
    when: '`metrics: true` (default)',
    does: 'counts every call by outcome code (refusals by the filters after it included), its latency, in flight, the last failure (docs/observability.md)',
    form: 'hooks',
  },
  shutdown: {
    order: 100,
    when: 'always',
    does: 'refuses new calls with `Shutdown` once the provider stops taking them',
    form: 'hooks',
  },
  'access-log': {
    order: 150,
    when: '`server.accessLog`',
    does: 'one line per call (caller, method, duration, outcome), refusals included (docs/security.md)',
    form: 'hooks',
  },
  deadline: {
    order: 200,
    when: 'always',
    does: "refuses with `Timeout` a call whose caller's deadline has passed; with `deadlineAdmission` (default) learns each method's service time and refuses with `Timeout` (`details.shed: 'deadline'`, never run), before decoding, a call whose remaining budget is smaller, or (with the adaptive limit, before its gate opens) whose wait behind the calls in flight would take more than half of it ([operations.md](operations.md))",
    form: 'hooks',
  },
  auth: {
    order: 250,
    when: '`server.auth` (tokens, JWT, mTLS)',
    does: 'takes the credentials out of the attachments and authenticates the caller (`invocation.identity`), `Unauthorized` otherwise, before the arguments are decoded; hooks with synchronous authenticators, wrapping with one that answers later (JWT)',
    form: 'hooks or wraps',
  },
  'registry-token': {
    order: 255,
    when: '`server.auth.registryToken: true`',
    does: 'refuses with `Unauthorized` a call from another process without the random token this provider published with its registry records (consumers that found it through a registry send it; docs/security.md)',
    form: 'hooks',
  },
  access: {
    order: 260,
    when: '`server.auth` (with `defaultAccess`, `rules`)',
    does: "the access rules: allow/deny by the caller's identity per service and method, `Unauthorized` otherwise",
    form: 'hooks',
  },
  admission: {
    order: 300,
    when: 'always',
    does: "with `server.adaptiveLimit` (on by default) first takes a place under the provider's learnt concurrency limit, by the call's priority, or — only while the provider is overloaded — refuses with `Overloaded` ([operations.md](operations.md)); then counts the arguments' elements (without decoding them), takes an execution slot and the elements from the limits (`maxConcurrentCalls`, `maxElementsInFlight`, the fair shares per connection and per address) or refuses with `Overloaded`; gives them back when the call ends",
    form: 'hooks',
  },
  'rate-limit': {
    order: 320,
    when: "`limits.rate`, `perApplication`, `perAddress` (`kind: 'token'`, the default)",
    does: 'token buckets of the app, service and method: every caller, per consumer application, per remote host; refuses with `RateLimited` and `retryAfterMs` ([governance.md](governance.md))',
    form: 'hooks',
  },
  executes: {
    order: 330,
    when: '`limits.executes`',
    does: 'calls of the app, service or method executing at once; refuses with `Overloaded` ([governance.md](governance.md))',
    form: 'hooks',
  },
  decode: {
    order: 350,
    when: 'always',
    does: 'decodes the arguments (a refused call is never decoded)',
    form: 'hooks',
  },
  'leaky-rate': {
    order: 360,
    when: "`limits.rate`, `perApplication`, `perAddress` with `kind: 'leaky'`",
    does: 'leaky buckets of the app, service and method: calls start at a steady rate, a burst waits in a bounded queue (holding its admission), a call beyond the queue is refused with `Overloaded` and never runs ([governance.md](governance.md))',
    form: 'wraps',
  },
  observe: {
    order: 400,
    when: 'always (free unless subscribed)',
    does: 'publishes `callisto:server:call`',
    form: 'hooks',
  },
  'tracing-server': {
    order: 410,
    when: '`tracing: true` (default; nothing done until an OpenTelemetry SDK is registered)',
    does: "a SERVER span per execution, child of the caller's (W3C `traceparent` attachment); the method runs in its context",
    form: 'wraps',
  },
  'test-kit-faults': {
    order: 450,
    when: "a test kit's providers (`callisto/testing`)",
    does: 'records every call and injects the faults the test scripted (errors, delays, hangs)',
    form: 'wraps',
  },
  user,
  validation: {
    order: 900,
    when: 'methods with `args`',
    does: "checks the arguments against the method's schema, `BadRequest` otherwise",
    form: 'wraps',
  },
} as const satisfies Record<string, FilterOrderEntry>;

const call = {
  'metrics-call': {
    order: 50,
    when: '`metrics: true` (default)',
    does: 'counts every call by outcome code as the caller saw it, its latency, in flight, the last failure',
    form: 'hooks',
  },
  cache: {
    order: 100,
    when: '`cache: { ttlMs, max }`',
    does: 'the result cache of an idempotent method: a hit answers without calling, concurrent misses share one call ([governance.md](governance.md))',
    form: 'wraps',
  },
  limit: {
    order: 150,
    when: "a reference's or method's `limits`",
    does: "the consumer's `rate` (`RateLimited`) and `actives` (`Overloaded`), refused before sending ([governance.md](governance.md))",
    form: 'hooks',
  },
  'tracing-client': {
    order: 190,
    when: '`tracing: true` (default; nothing done until an SDK is registered)',
    does: 'a CLIENT span per call; its trace context goes to the provider in the attachments',
    form: 'hooks',
  },
  user,
  mock: {
    order: 900,
    when: "`mock: 'fail'`",
    does: 'answers from the mock when the call fails (business errors excepted)',
    form: 'wraps',
  },
} as const satisfies Record<string, FilterOrderEntry>;

const attempt = {
  deadline: {
    order: 100,
    when: 'always',
    does: "gives the attempt what is left of the call's deadline, `Timeout` when nothing is",
    form: 'hooks',
  },
  credentials: {
    order: 150,
    when: '`consumer.credentials`, `credentialsFilter()`',
    does: "sends the consumer's token: over TCP presented once per connection (an `authenticate` event, again when it changes), else in the `authorization` attachment of every call; a call's own credentials win",
    form: 'hooks',
  },
  observe: {
    order: 200,
    when: 'always (free unless subscribed)',
    does: 'publishes `callisto:client:call` (one message per attempt)',
    form: 'hooks',
  },
  'endpoint-stats': {
    order: 300,
    when: 'always',
    does: "the provider's calls in flight, latency and error rate, which the balancers read",
    form: 'hooks',
  },
  outlier: {
    order: 400,
    when: '`outlierDetection: true` (default)',
    does: "reports the outcome to the service's outlier detector",
    form: 'hooks',
  },
  'metrics-client': {
    order: 450,
    when: '`metrics: true` (default)',
    does: 'counts attempts by provider and outcome code, retries and failovers',
    form: 'hooks',
  },
  throttle: {
    order: 460,
    when: '`adaptiveThrottling: true` (default)',
    does: "client-side adaptive throttling: refuses an attempt before sending it, with probability max(0, (requests − K·accepts) / (requests + 1)) over the provider's last 2 minutes (`adaptiveThrottlingK`, default 2), `Overloaded` never sent, and failover moves the call to an untried provider, not counted as a retry ([operations.md](operations.md))",
    form: 'hooks',
  },
  user,
} as const satisfies Record<string, FilterOrderEntry>;

/** Every filter Callisto places, by position, in running order. */
export const FILTER_TABLE = { provider, call, attempt } as const satisfies Record<
  FilterPosition,
  Record<string, FilterOrderEntry>
>;

type Orders<T> = { readonly [Name in keyof T]: number };

/** The order of each filter Callisto places, by position and name (`FILTER_ORDER.provider.decode`). */
export const FILTER_ORDER: {
  readonly provider: Orders<typeof provider>;
  readonly call: Orders<typeof call>;
  readonly attempt: Orders<typeof attempt>;
} = Object.freeze({
  provider: ordersOf(provider),
  call: ordersOf(call),
  attempt: ordersOf(attempt),
});

function ordersOf<T extends Record<string, FilterOrderEntry>>(entries: T): Orders<T> {
  return Object.freeze(
    Object.fromEntries(Object.entries(entries).map(([name, entry]) => [name, entry.order])),
  ) as Orders<T>;
}

/** The order of a user filter that names none. */
export const DEFAULT_FILTER_ORDER = USER;
