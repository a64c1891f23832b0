/**
 * Callisto's public API for end users: apps, services and references, calls and their options, errors,
 * configuration, filters, diagnostics. What extension authors need (cluster strategies, load balancers,
 * transports, serializers, registries, and the built-in table) is under `callisto/extend`
 * (src/extend.ts); registry implementations under `callisto/registry`; the test kit under
 * `callisto/testing`.
 */

export { ADMIN_PATHS } from './admin/admin-server.js';
export type { AppState } from './app/app-state.js';
// Apps and services
export { type AppOptions, type CallistoApp, callisto } from './app/callisto-app.js';
// Configuration
export {
  type CallistoConfig,
  type CallistoConfigInput,
  type ConsumerConfig,
  DEFAULT_CONFIG,
  type ServerConfig,
} from './app/config/callisto-config.js';
export {
  type ConfigNotice,
  type LoadConfigOptions,
  type LoadedConfig,
  loadConfig,
  loadConfigWithSources,
} from './app/config/load-config.js';
export type { CallOptions, MethodReferenceOptions, ReferenceOptions } from './consumer/reference-options.js';
// Calls
export { releaseReference } from './consumer/release-reference.js';
export { withOptions } from './consumer/with-options.js';
export { ConfigError } from './core/config-error.js';
// Errors
export type { ErrorDeclaration, ErrorExposure } from './core/error-payload.js';
// Filters
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
// Decorators (standard TC39 decorators; @RpcService also works under experimentalDecorators)
export {
  type DecoratedApp,
  type DecoratedInstances,
  type DecoratedTarget,
  registerDecorated,
} from './decorators/register-decorated.js';
export { type ReferenceDecorator, RpcReference } from './decorators/rpc-reference.js';
export { type ClassOf, RpcService, type ServiceClassDecorator } from './decorators/rpc-service.js';
// Extension names (literal types; augment the interfaces to add yours) and the `extend` option's registry
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
  type TransportName,
  type TransportNames,
} from './extension/extension-names.js';
export type { ExtensionKinds, ExtensionRegistry, ExtensionTable } from './extension/extension-registry.js';
// Security (docs/security.md): TLS is configuration (server.tls, consumer.tls); these are for code
export { type AccessLogOptions, accessLogFilter } from './filters/access-log.js';
export {
  type AccessRule,
  type AccessRulesOptions,
  accessRulesFilter,
  type DefaultAccess,
} from './filters/access-rules.js';
export { type AuthFilterOptions, authFilter } from './filters/auth.js';
export { type CredentialSource, credentialsFilter } from './filters/credentials.js';
// HTTP gateway (docs/http.md)
export { createGateway, type Gateway, type GatewayOptions } from './gateway/gateway.js';
export type { HttpOptions } from './http/http-options.js';
// Diagnostics and logs
export {
  CHANNEL_NAMES,
  type ClientCallMessage,
  type ConnectionMessage,
  type ProtocolErrorMessage,
  type ServerCallMessage,
} from './observability/channels.js';
export { LATENCY_BUCKETS_SECONDS } from './observability/latency-histogram.js';
export type { Logger, LogLevel } from './observability/logger.js';
export { type LogFields, type PinoLike, pinoLogger } from './observability/logger.js';
export type { MethodStats, StatsFeed } from './observability/stats.js';
export { callContext } from './provider/call-context.js';
export type { ExecutorOption, ModuleLocation, WorkerExecutorOptions } from './provider/executor-options.js';
export { workerNumber as workerProcessNumber } from './provider/process-worker.js';
export type { ProvideOptions } from './provider/provide-options.js';
export {
  AUTH_ATTACHMENT,
  type Authenticator,
  AuthFailure,
  type AuthRequest,
  bearer,
  type CallerIdentity,
} from './security/authenticator.js';
export { type JwtAuthenticatorOptions, jwtAuthenticator } from './security/jwt-authenticator.js';
export { type MtlsAuthenticatorOptions, mtlsAuthenticator } from './security/mtls-authenticator.js';
export type { PeerCertificate } from './security/peer-certificate.js';
export { HIDDEN, redactConfig, SECRET_CONFIG_KEYS } from './security/redact.js';
export { tokenAuthenticator } from './security/token-authenticator.js';
// Protocol Buffers bodies (docs/http.md): register with extend, for services that declare messages
export {
  createProtobufSerializer,
  PROTOBUF_SERIALIZER_ID,
  type ProtobufDeclaration,
  type ProtobufRoot,
} from './serialization/protobuf.js';
// Contracts
export {
  type DeclaredMethods,
  defineService,
  type MethodDeclaration,
  type ServiceDefinition,
  type ServiceDefinitionOptions,
} from './service/define-service.js';
export type { ArgumentsSchema, Implementation, MethodNames, Remote } from './service/service-types.js';
