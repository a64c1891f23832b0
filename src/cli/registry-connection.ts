/**
 * The registry `ls` and `doctor` read, opened through the public registry API with the app's extensions
 * (so user registry kinds work), connected within a bound or reported unreachable. Its warnings (the
 * entries it skipped, as its readers log them) go to the caller.
 */
import type { CallistoApp } from '../index.js';
import { createRegistry, type Registry } from '../registry/index.js';
import { unreachableError, usageError } from '../tools/exit-codes.js';

export interface OpenedRegistry {
  readonly registry: Registry;
  readonly address: string;
  /** Where its entries are (for `file://` the resolved directory). */
  readonly location: string;
  /** How long it took to connect, ms. */
  readonly connectedInMs: number;
}

/** The one registry a command reads: `--registry`, else the configuration's only one. */
export function registryAddressOf(app: CallistoApp): string {
  const configured = app.config.registry;
  if (configured.length === 1) return configured[0]!;
  if (configured.length === 0) {
    throw usageError(
      'which registry? give --registry <address> (e.g. etcd://127.0.0.1:2379, file://.callisto/registry)',
    );
  }
  throw usageError(
    `which registry? the configuration names ${configured.length} (${configured.join(', ')}): give --registry <address>`,
  );
}

function waitConnected(registry: Registry, timeoutMs: number): Promise<boolean> {
  if (registry.status === 'connected') return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      stop();
      resolve(false);
    }, timeoutMs);
    const stop = registry.onStatus((status) => {
      if (status !== 'connected') return;
      clearTimeout(timer);
      stop();
      resolve(true);
    });
  });
}

/**
 * Opens the registry at `address` and waits until it is connected; after `timeoutMs` it is closed and an
 * unreachable error (exit 3) says why.
 */
export async function openRegistry(
  app: CallistoApp,
  address: string,
  timeoutMs: number,
  onWarning: (message: string) => void,
): Promise<OpenedRegistry> {
  const started = performance.now();
  let connected = false;
  const registry = await createRegistry(
    address,
    {
      ttlMs: app.config.registryTtlMs,
      // before it is connected, what it says is about connecting: the unreachable error says it once
      log: (level, message) => {
        if (level !== 'info' && connected) onWarning(message);
      },
    },
    app.extensions,
  );
  const location = registry.location ?? address;
  connected = await waitConnected(registry, timeoutMs);
  if (!connected) {
    const why = registry.lastError ?? `no answer within ${timeoutMs} ms`;
    await registry.close();
    throw unreachableError(
      `cannot reach the registry ${location}: ${why}; check that its server runs at that address`,
    );
  }
  return { registry, address, location, connectedInMs: performance.now() - started };
}
