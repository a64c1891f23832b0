/**
 * Callisto's public API. Everything a user of the framework needs is exported here; optional parts
 * (registries' internals) live behind documented subpath exports.
 */

export type { AppState } from './app/app-state.js';
// Apps and services
export { type AppOptions, type CallistoApp, callisto } from './app/callisto-app.js';
export type { ProvideOptions } from './app/provider-side.js';
export type { ClusterContext, ClusterFactory, ClusterInvoker, ClusterOptions } from './cluster/cluster.js';
export type { RetryOptions, RetryPolicy, RetryPolicyFactory } from './cluster/retry-policy.js';
// Configuration
export {
  type CallistoConfig,
  type CallistoConfigInput,
  type ConsumerConfig,
  DEFAULT_CONFIG,
  type ServerConfig,
} from './config/callisto-config.js';
export { ConfigError } from './config/config-error.js';
export { type LoadConfigOptions, loadConfig } from './config/load-config.js';
// Calls
export { withOptions } from './consumer/reference.js';
export type { CallOptions, MethodReferenceOptions, ReferenceOptions } from './consumer/reference-options.js';
export type { ErrorDeclaration, ErrorExposure } from './core/error-payload.js';
export {
  defineFilter,
  type FilterEntry,
  type FilterPosition,
  type FilterSpec,
  type NamedFilter,
} from './core/filter.js';
export {
  type Attachments,
  composeFilters,
  type Filter,
  type Invocation,
  type Invoker,
} from './core/invocation.js';
export { ErrorCode, type ErrorCodeName, RpcError } from './core/rpc-error.js';
export type { ServiceKey } from './core/service-key.js';
// Extension points
export {
  BUILTIN_EXTENSION_NAMES,
  type ClusterName,
  type ClusterNames,
  type LoadBalancerName,
  type LoadBalancerNames,
  type RegistryKindName,
  type RegistryKindNames,
  type RetryPolicyName,
  type RetryPolicyNames,
  type SerializerName,
  type SerializerNames,
} from './extension/extension-names.js';
export {
  builtinExtensions,
  type ExtensionKinds,
  type ExtensionRegistry,
} from './extension/extension-registry.js';
export type {
  Endpoint,
  EndpointStats,
  LoadBalancer,
  LoadBalancerFactory,
  LoadBalancerOptions,
} from './loadbalance/load-balancer.js';
export {
  CHANNEL_NAMES,
  type ClientCallMessage,
  type ConnectionMessage,
  type ProtocolErrorMessage,
  type ServerCallMessage,
} from './observability/channels.js';
export type { Logger, LogLevel } from './observability/logger.js';
export { callContext } from './provider/call-context.js';
export type { ConsumerRecord, ProviderRecord } from './registry/provider-record.js';
export type {
  ProviderListener,
  Registry,
  RegistryAddress,
  RegistryFactory,
  RegistryOptions,
  RegistryStatus,
} from './registry/registry.js';
export { DecodeLimitError, type DecodeLimits, MAX_DECODE_DEPTH } from './serialization/decode-limits.js';
export type { Serializer } from './serialization/serializer.js';
export {
  type DeclaredMethods,
  defineService,
  type MethodDeclaration,
  type ServiceDefinition,
  type ServiceDefinitionOptions,
} from './service/define-service.js';
export type { ArgumentsSchema, Implementation, MethodNames, Remote } from './service/service-types.js';
