/**
 * The checks that need the app's extensions, run when the app is built (after extension modules are
 * loaded) and when a reference is made: every configured extension name is registered, every registry
 * address has a registered kind, parses, and has its client package installed. Each failure is a
 * ConfigError naming the key, the value, what is allowed and where the value was set.
 */

import { checkExtensionName, type NameSite } from '../extension/extension-names.js';
import type { ExtensionRegistry } from '../extension/extension-registry.js';
import { checkRegistryAddressFor } from '../registry/check-registry-address.js';
import type { LoadedConfig } from './config/load-config.js';

/** Checks the extension names and registry addresses of the app's configuration. */
export function checkAppConfig({ config, sourceOf }: LoadedConfig, extensions: ExtensionRegistry): void {
  const site = (key: string): NameSite => ({ key, source: sourceOf(key) });
  const { consumer } = config;
  checkExtensionName(extensions, 'serializer', consumer.serializer, site('consumer.serializer'));
  checkExtensionName(extensions, 'compressor', consumer.compressor, site('consumer.compressor'));
  checkExtensionName(extensions, 'loadbalance', consumer.loadbalance, site('consumer.loadbalance'));
  checkExtensionName(extensions, 'cluster', consumer.cluster, site('consumer.cluster'));
  checkExtensionName(extensions, 'retry', consumer.retry, site('consumer.retry'));
  checkExtensionName(extensions, 'transport', config.server.transport, site('server.transport'));
  config.server.serializers.forEach((name, i) => {
    checkExtensionName(extensions, 'serializer', name, site(`server.serializers[${i}]`));
  });
  config.registry.forEach((address, i) => {
    checkRegistryAddressFor(extensions, address, site(`registry[${i}]`));
  });
}
