/**
 * The registry layer: the contract, the built-in implementations (file, direct, etcd, ZooKeeper, Redis,
 * registered as `registry` extensions on import), and the checks of stored records.
 */

export { checkRouteRule, checkRouteRules } from '../routing/check-route-rules.js';
export { RouteSyntaxError } from '../routing/condition-syntax.js';
export {
  type ConditionRule,
  DEFAULT_PANIC_THRESHOLD,
  DEFAULT_ZONE_THRESHOLD,
  ROUTE_KINDS,
  ROUTING_TAG_ATTACHMENT,
  type RouteKind,
  type RouteRule,
  type RouteRuleBase,
  type SplitTarget,
  type TagRule,
  type WeightRule,
  type ZoneRule,
} from '../routing/route-rule.js';
export type { RouteCaller } from '../routing/router.js';
export type { RouteExplanation, RouteStep } from '../routing/routing-stage.js';
export { BUILTIN_REGISTRY_FACTORIES } from './builtin-registries.js';
export {
  type ConsumerRecordCheck,
  parseConsumerRecord,
  validateConsumerRecord,
} from './consumer-record-check.js';
export { createRegistry } from './create-registry.js';
export { createDirectRegistry, directProviderRecord } from './direct-registry.js';
export { createEtcdRegistry } from './etcd-registry.js';
export { createFileRegistry } from './file-registry.js';
export {
  checkOverrides,
  emptyOverrides,
  isEmptyOverrides,
  type MockMode,
  mergeOverrides,
  parseOverrides,
  type ServiceOverrides,
  staleProviders,
} from './override-record.js';
export { OVERRIDE_UPDATE_ATTEMPTS, OverrideConflictError } from './override-update.js';
export {
  type ConsumerRecord,
  type ProviderRecord,
  providerAddress,
  recordServiceKey,
  servicePathSegment,
  withoutToken,
} from './provider-record.js';
export { createRecordReader, type RecordReader, type StoredEntry } from './record-reader.js';
export {
  MAX_PROVIDER_WEIGHT,
  MAX_RECORD_BYTES,
  parseProviderRecord,
  type RecordCheck,
  validateProviderRecord,
} from './record-validation.js';
export { createRedisRegistry } from './redis-registry.js';
export {
  DEFAULT_REGISTRY_OPTIONS,
  type OverrideChange,
  type OverrideListener,
  type OverrideUpdateOptions,
  type ProviderListener,
  type Registry,
  type RegistryAddress,
  type RegistryFactory,
  type RegistryOptions,
  type RegistryStatus,
  type ServiceHolding,
  type ServiceListing,
} from './registry.js';
export { DEFAULT_REGISTRY_PORTS, formatRegistryAddress, parseRegistryAddress } from './registry-address.js';
export {
  type ControlKeyOptions,
  type ControlTargetOptions,
  createRegistryControl,
  type RegistryControl,
  type RegistryControlOptions,
} from './registry-control.js';
export { resolveRegistryOptions } from './registry-options.js';
export type { RouteCallOptions } from './route-control.js';
export { createZooKeeperRegistry } from './zookeeper-registry.js';
