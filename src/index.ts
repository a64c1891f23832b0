// biome-ignore-all assist/source/organizeImports: the exports are grouped by what an application does, in sections
/**
 * `callisto`: Callisto's public API for applications: apps, services and references, calls and their
 * options, filters, errors, security, the HTTP gateway, diagnostics. Every export here is semver: adding,
 * removing or changing one is recorded in api/callisto.api.md (`npm run api:report`) and CHANGELOG.md.
 *
 * The other entries: `callisto/extend` (src/extend.ts) for extension authors (cluster strategies, load
 * balancers, transports, serializers, registries, the built-in table); `callisto/registry` for registry
 * implementations; `callisto/testing` for the test kit; `callisto/nestjs` for the NestJS module.
 * `callisto/internal` (src/internal.ts) is for Callisto's own CLI and dashboard and is not semver.
 */

// App: callisto() and the app it returns
export type { AppState } from './app/app-state.js';
export { type AppOptions, type CallistoApp, callisto } from './app/callisto-app.js';

// Configuration: the resolved configuration, its input, its defaults, and loading it without an app
export {
  type CallistoConfig,
  type CallistoConfigInput,
  DEFAULT_CONFIG,
} from './app/config/callisto-config.js';
export { type LoadConfigOptions, loadConfig } from './app/config/load-config.js';

// Services: contracts and what they type
export {
  type DeclaredMethods,
  defineService,
  type MethodDeclaration,
  type StreamKind,
  type ServiceDefinition,
  type ServiceDefinitionOptions,
} from './service/define-service.js';
export type {
  ArgumentsSchema,
  Implementation,
  MethodNames,
  Remote,
  ResultSchema,
} from './service/service-types.js';
// The .proto of a service, for gRPC clients in other languages (docs/schemas.md)
export { exportProto } from './service/proto/export-proto.js';
export type { ServiceKey } from './core/service-key.js';
export type { CallPriority } from './governance/call-priority.js';

// Calls: references, per-call options, the context a provider's handler runs in
export type { CallOptions, MethodReferenceOptions, ReferenceOptions } from './consumer/reference-options.js';
export { echo } from './consumer/echo.js';
export { releaseReference } from './consumer/release-reference.js';
export { withOptions } from './consumer/with-options.js';
export { callContext } from './provider/call-context.js';

// Decorators (standard TC39 decorators; @RpcService also works under experimentalDecorators)
export {
  type DecoratedApp,
  type DecoratedInstances,
  type DecoratedTarget,
  registerDecorated,
} from './decorators/register-decorated.js';
export { type ReferenceDecorator, RpcReference } from './decorators/rpc-reference.js';
export { type ClassOf, RpcService, type ServiceClassDecorator } from './decorators/rpc-service.js';

// Filters: writing one, and the types of the chain
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

// Built-in filters given in code (the rest are configuration)
export { type AccessLogOptions, accessLogFilter } from './filters/access-log.js';
export {
  type AccessRule,
  type AccessRulesOptions,
  accessRulesFilter,
  type DefaultAccess,
} from './filters/access-rules.js';
export { type AuthFilterOptions, authFilter } from './filters/auth.js';
export { type CredentialSource, credentialsFilter } from './filters/credentials.js';

// Errors
export { ConfigError } from './core/config-error.js';
export type { ErrorDeclaration, ErrorExposure } from './core/error-payload.js';
export { ErrorCode, type ErrorCodeName, RpcError } from './core/rpc-error.js';

// Security (docs/security.md): TLS is configuration (server.tls, consumer.tls); these are for code
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
export { tokenAuthenticator } from './security/token-authenticator.js';

// HTTP gateway (docs/http.md)
export { createGateway, type Gateway, type GatewayOptions } from './gateway/gateway.js';
export type { HttpOptions } from './http/http-options.js';

// Protocol Buffers bodies (docs/http.md): register with extend, for services that declare messages
export {
  createProtobufSerializer,
  type ProtobufDeclaration,
  type ProtobufRoot,
} from './serialization/protobuf.js';

// hessian2 bodies (docs/serialization.md): Java class names on JS values
export { JAVA_CLASS, javaClassOf, javaEnum, withJavaClass } from './serialization/hessian2-java.js';

// Diagnostics and logs (docs/observability.md)
export {
  CHANNEL_NAMES,
  type ClientCallMessage,
  type ConnectionMessage,
  type ProtocolErrorMessage,
  type RetriesExhaustedMessage,
  type ServerCallMessage,
} from './observability/channels.js';
export {
  LATENCY_BUCKETS_SECONDS,
  STREAM_DURATION_BUCKETS_SECONDS,
} from './observability/latency-histogram.js';
export {
  type LogFields,
  type Logger,
  type LogLevel,
  type PinoLike,
  pinoLogger,
} from './observability/logger.js';

// Worker processes and executors (docs/operations.md)
export type { ExecutorOption, ModuleLocation, WorkerExecutorOptions } from './provider/executor-options.js';
export { workerNumber as workerProcessNumber } from './provider/process-worker.js';

// Options types: providing a service (references' are under Calls)
export type { ProvideOptions } from './provider/provide-options.js';

// Extension names (literal types; augment the interfaces to add yours) and the `extend` option's registry
export type {
  ClusterName,
  ClusterNames,
  LoadBalancerName,
  LoadBalancerNames,
  RegistryKindName,
  RegistryKindNames,
  RetryPolicyName,
  RetryPolicyNames,
  SerializerName,
  SerializerNames,
  TransportName,
  TransportNames,
} from './extension/extension-names.js';
export type { ExtensionRegistry } from './extension/extension-registry.js';
