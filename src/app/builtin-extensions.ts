/**
 * Callisto's built-in extensions, one constant table, frozen: serializers, compressors, load balancers, cluster
 * strategies, retry policies, registry kinds and transports. Every app starts from a copy of it and adds
 * its own (`callisto({ extend })`, config `extensions`); nothing anyone registers reaches this table or
 * another app.
 */
import { BUILTIN_CLUSTERS } from '../cluster/builtin-clusters.js';
import { BUILTIN_RETRY_POLICIES } from '../cluster/index-policies.js';
import { createExtensionTable, type ExtensionTable } from '../extension/extension-registry.js';
import { BUILTIN_LOAD_BALANCERS } from '../loadbalance/index.js';
import { BUILTIN_REGISTRY_FACTORIES } from '../registry/builtin-registries.js';
import { BUILTIN_COMPRESSORS } from '../serialization/compression/index.js';
import { BUILTIN_SERIALIZERS } from '../serialization/index.js';
import { BUILTIN_TRANSPORTS } from '../transport/index.js';

export const builtinExtensions: ExtensionTable = createExtensionTable({
  serializer: BUILTIN_SERIALIZERS,
  compressor: BUILTIN_COMPRESSORS,
  loadbalance: BUILTIN_LOAD_BALANCERS,
  cluster: BUILTIN_CLUSTERS,
  retry: BUILTIN_RETRY_POLICIES,
  registry: BUILTIN_REGISTRY_FACTORIES,
  transport: BUILTIN_TRANSPORTS,
});
