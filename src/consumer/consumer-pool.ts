/**
 * The consumer's connection pool as an app uses it: connections over the transport each provider names
 * (one instance of each transport per app), answers decoded in the app's serializers, and what the pool
 * reports made into log lines (one per provider per outage, outage-log.ts; refusals rate-limited) and
 * diagnostics-channel messages (`callisto:client:connection`).
 */
import type { ExtensionRegistry } from '../extension/extension-registry.js';
import { type ConnectionMessage, channels } from '../observability/channels.js';
import type { Logger } from '../observability/logger.js';
import { createRateLimitedLog } from '../observability/rate-limited-log.js';
import type { ConnectionOptions } from '../protocol/connection-options.js';
import type { SerializerTable } from '../serialization/serializer-table.js';
import type { ClientTlsOptions } from '../transport/tls-options.js';
import type { Transport } from '../transport/transport.js';
import { type ConnectionPool, createConnectionPool, POOL_RECONNECT } from './connection-pool.js';
import { createOutageLog } from './outage-log.js';

export interface ConsumerPoolParts {
  readonly extensions: ExtensionRegistry;
  readonly serializers: SerializerTable;
  readonly connection: ConnectionOptions;
  readonly idleTimeoutMs: number;
  /** `consumer.tls`, resolved: how HTTPS entries are verified (`protocol: 'http'` references). */
  readonly httpTls?: ClientTlsOptions | undefined;
  readonly logger: Logger;
  /** A heartbeat round trip was measured (the latency-aware balancers learn from it even when idle). */
  readonly onHeartbeatRtt: (address: string, rttMs: number, load: string | undefined) => void;
}

function publishConnection(
  address: string,
  event: ConnectionMessage['event'],
  reason: string | undefined,
): void {
  if (channels.connection.hasSubscribers) {
    channels.connection.publish({ address, event, reason } satisfies ConnectionMessage);
  }
}

export function createConsumerPool(parts: ConsumerPoolParts): ConnectionPool {
  const { logger } = parts;
  const byId: ReturnType<SerializerTable['byId']>[] = [];
  for (const serializer of parts.serializers.serializers) byId[serializer.id] = serializer;
  const hostileLog = createRateLimitedLog((message) => logger.warn(message));
  const outages = createOutageLog((level, message) => logger[level](message));
  const transports = new Map<string, Transport>();
  const transportNamed = (name: string): Transport => {
    let transport = transports.get(name);
    if (transport === undefined) {
      transport = parts.extensions.get('transport', name)();
      transports.set(name, transport);
    }
    return transport;
  };
  return createConnectionPool(
    byId,
    {
      ...POOL_RECONNECT,
      transport: transportNamed,
      idleTimeoutMs: parts.idleTimeoutMs,
      connection: parts.connection,
      httpTls: parts.httpTls,
    },
    {
      onRefused: (_address, reason) => hostileLog.warn('refused', reason),
      onGoAway: (address) => {
        logger.info(`provider ${address} is going away; no new calls routed to it`);
        publishConnection(address, 'goaway', undefined);
      },
      onDisconnect: (address, error) => {
        if (error) outages.lost(address, error);
        publishConnection(address, 'closed', error?.message);
      },
      onConnect: (address) => {
        outages.connected(address);
        publishConnection(address, 'open', undefined);
      },
      onRelease: (address) => outages.forgotten(address),
      onSuspect: (address, silentMs) => {
        logger.warn(
          `provider ${address} sent nothing for ${silentMs} ms while calls waited (a ping unanswered): suspected; no new calls routed to it until it answers, its idempotent calls retried elsewhere`,
        );
        publishConnection(address, 'suspected', `silent for ${silentMs} ms`);
      },
      onSuspectCleared: (address) => {
        logger.info(`provider ${address} answered again: no longer suspected`);
        publishConnection(address, 'open', undefined);
      },
      onHeartbeatRtt: parts.onHeartbeatRtt,
    },
  );
}
