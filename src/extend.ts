/**
 * `callisto/extend`: everything an extension author needs, typed, so that no extension casts. An
 * extension is registered in an app (`callisto({ extend: (extensions) => extensions.register(kind, name,
 * factory) })`, or a module named in the config's `extensions`), never in the process: the built-ins are
 * a frozen table (`builtinExtensions`) each app starts from.
 *
 * Kinds and what they build (docs/extending.md):
 * - `cluster`: a fault-tolerance strategy, `(context: ClusterContext) => (invocation) => Promise`;
 * - `loadbalance`: a balancer, `(options) => { select(endpoints, invocation) }`;
 * - `retry`: a retry delay policy, `(options) => { nextDelayMs(attempt, elapsedMs) }`;
 * - `serializer`: a `Serializer` instance;
 * - `compressor`: a `Compressor` instance (`{ name, id, compress, decompress(body, maxBytes) }`);
 * - `registry`: a registry kind, `(address, options) => Registry` (implementations: `callisto/registry`);
 * - `transport`: a transport, `() => Transport` (listen/connect for byte streams).
 * Filters are not an extension kind: they are given to an app, a service, a reference or a method.
 */

export { builtinExtensions } from './app/builtin-extensions.js';
// Cluster strategies
export { BUILTIN_CLUSTERS } from './cluster/builtin-clusters.js';
export {
  createOutlierDetector,
  DEFAULT_OUTLIER_OPTIONS,
  type OutlierDetector,
  type OutlierDetectorOptions,
  type OutlierSnapshot,
  type OutlierState,
  resolveOutlierOptions,
} from './cluster/circuit-breaker.js';
export type {
  AttemptListener,
  ClusterContext,
  ClusterEndpoint,
  ClusterFactory,
  ClusterInvocation,
  ClusterInvoker,
  ClusterOptions,
} from './cluster/cluster.js';
export { BUILTIN_RETRY_POLICIES } from './cluster/index-policies.js';
export {
  createRetryBudget,
  DEFAULT_RETRY_BUDGET_OPTIONS,
  type RetryBudget,
  type RetryBudgetOptions,
  resolveRetryBudgetOptions,
} from './cluster/retry-budget.js';
export {
  DEFAULT_RETRY_OPTIONS,
  type RetryJitter,
  type RetryOptions,
  type RetryPolicy,
  type RetryPolicyFactory,
  resolveRetryOptions,
  withinLimits,
} from './cluster/retry-policy.js';
// Calls, errors, filters (the same as `callisto`'s)
export {
  defineFilter,
  type FilterEntry,
  type FilterPosition,
  type FilterSpec,
  type NamedFilter,
} from './core/filter.js';
export type {
  Attachments,
  Filter,
  Invocation,
  InvocationStream,
  Invoker,
  StreamDirection,
  StreamMessageListener,
} from './core/invocation.js';
export { ErrorCode, type ErrorCodeName, RpcError } from './core/rpc-error.js';
export type { ServiceKey } from './core/service-key.js';
// Extension names and registries
export {
  BUILTIN_EXTENSION_NAMES,
  type ClusterNames,
  type CompressorNames,
  type LoadBalancerNames,
  type RegistryKindNames,
  type RetryPolicyNames,
  type SerializerNames,
  type TransportNames,
} from './extension/extension-names.js';
export {
  createExtensionRegistry,
  type ExtensionKind,
  type ExtensionKinds,
  type ExtensionRegistry,
  type ExtensionTable,
} from './extension/extension-registry.js';
// Load balancers
export { balancingWeight } from './loadbalance/effective-weight.js';
export {
  createEndpointStats,
  DEFAULT_ENDPOINT_STATS_OPTIONS,
  type EndpointStatsOptions,
  type EndpointStatsRecorder,
} from './loadbalance/endpoint-stats.js';
export {
  BUILTIN_LOAD_BALANCERS,
  createConsistentHashLoadBalancer,
  createLeastActiveLoadBalancer,
  createP2cLoadBalancer,
  createRandomLoadBalancer,
  createRoundRobinLoadBalancer,
  createShortestResponseLoadBalancer,
  resolveLoadBalancerOptions,
  warmupWeight,
} from './loadbalance/index.js';
export {
  DEFAULT_LOAD_BALANCER_OPTIONS,
  type Endpoint,
  type EndpointStats,
  type LoadBalancer,
  type LoadBalancerFactory,
  type LoadBalancerOptions,
} from './loadbalance/load-balancer.js';
export { LOAD_ATTACHMENT, parseLoad, type ReportedLoad } from './loadbalance/load-report.js';
// Registries (the implementations and the record checks: `callisto/registry`)
export type { ConsumerRecord, ProviderRecord } from './registry/provider-record.js';
export type {
  ProviderListener,
  Registry,
  RegistryAddress,
  RegistryFactory,
  RegistryOptions,
  RegistryStatus,
  ServiceHolding,
} from './registry/registry.js';
// Compressors
export {
  BUILTIN_COMPRESSORS,
  brotliCompressor,
  type Compressor,
  deflateCompressor,
  gzipCompressor,
  InflateBoundError,
} from './serialization/compression/index.js';
// Serializers
export { DecodeLimitError, type DecodeLimits, MAX_DECODE_DEPTH } from './serialization/decode-limits.js';
export {
  BUILTIN_SERIALIZERS,
  createHessian2Serializer,
  createJsonSerializer,
  createMsgpackSerializer,
  createV8Serializer,
  type Serializer,
} from './serialization/index.js';
// Transports
export { BUILTIN_TRANSPORTS } from './transport/index.js';
export { createMemoryNetwork, createMemoryTransport, type MemoryNetwork } from './transport/memory.js';
export { createTcpTransport } from './transport/tcp.js';
export { createTlsTransport, type TlsTransport, type TlsTransportParts } from './transport/tls.js';
export type { ClientTlsOptions, PemSource, ServerTlsOptions } from './transport/tls-options.js';
export {
  type Admitted,
  type ByteStream,
  type ConnectOptions,
  type ListenOptions,
  type Transport,
  type TransportFactory,
  type TransportListener,
  transportAddress,
} from './transport/transport.js';
