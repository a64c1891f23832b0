/**
 * `callisto/internal`: what Callisto's own command line (src/cli/) and dashboard (src/dashboard/), and
 * the helpers they share (src/tools/), need beyond the public entries. It is NOT semver: anything here
 * may change or go in any release, without notice in CHANGELOG.md. Applications use `callisto`,
 * `callisto/extend`, `callisto/registry`, `callisto/testing` and `callisto/nestjs`.
 *
 * The CLI, the dashboard and the NestJS module import Callisto through the entries only (index.ts,
 * extend.ts, registry/index.ts, testing/, this file), never a deep path: scripts/check-imports.ts checks it.
 */

// Configuration: where each value came from, and how it is shown
export {
  type ConfigNotice,
  type LoadedConfig,
  loadConfigWithSources,
} from './app/config/load-config.js';
export { splitAddressList } from './core/address-list.js';
// Every service's echo method (`callisto call <service>.$echo`)
export { ECHO_METHOD } from './core/echo.js';
// Services and decorated classes (the NestJS module)
export { serviceKeyString } from './core/service-key.js';
export { checkDefinition, keyOf } from './decorators/check-definition.js';
export { type ServiceDeclaration, serviceDeclarationsOf } from './decorators/rpc-service.js';
// HTTP listeners and TLS (the dashboard's listener, the CLI's doctor): the HTTP toolkit (src/http/)
export { sendAnswer, sendJson } from './http/answer.js';
export { createBearerCheck } from './http/bearer-token.js';
export { createConnectionCaps } from './http/connection-caps.js';
export { type BodyReader, createBodyReader } from './http/http-body.js';
export { createHttpListener, type HttpListener } from './http/http-listener.js';
export { HttpRefusal } from './http/http-request.js';
export { listenerTls } from './http/listener-tls.js';
export { PAGE_CONTENT_SECURITY_POLICY, securityHeaders } from './http/security-headers.js';
export { HIDDEN, redactAddress, redactConfig } from './security/redact.js';
// The JSON dialect's typed arrays (the CLI's and dashboard's JSON views)
export { TYPED_ARRAYS, type TypedArrayName } from './serialization/typed-arrays.js';
export { describeTlsFailure, noClientTlsMessage } from './transport/tls.js';
export {
  type ClientTlsConfig,
  clientContextOptions,
  resolveClientTls,
} from './transport/tls-options.js';
