/**
 * One provider as the consumer sees it: where it is, its weight and start time (for the balancers),
 * its live counters (kept by the `endpoint-stats` filter on every attempt), its adaptive throttling
 * state (the `throttle` filter), and what it is reached
 * through: a pool handle (its connection) or, for in-process calls, the app's own provider.
 */
import { type AdaptiveThrottle, createAdaptiveThrottle } from '../cluster/adaptive-throttle.js';
import type { ClusterEndpoint } from '../cluster/cluster.js';
import { tickMonotonic, tickNow } from '../core/clock.js';
import type { Attachments } from '../core/invocation.js';
import { REGISTRY_TOKEN_ATTACHMENT } from '../core/registry-token.js';
import { createEndpointStats, type EndpointStatsRecorder } from '../loadbalance/endpoint-stats.js';
import type { ProviderRecord } from '../registry/provider-record.js';
import { DEFAULT_TRANSPORT, transportAddress } from '../transport/transport.js';
import type { OutboundCall } from './pending-call.js';

/** The transport (and address) of the in-process endpoint: calls to a service the app provides itself. */
export const IN_PROCESS = 'injvm';

/** Takes calls to one provider: a connection, or the in-process provider. */
export interface CallTarget {
  send(call: OutboundCall): void;
}

/** What an endpoint is reached through. */
export interface EndpointLink {
  /** Whether calls may be routed there now (connected or connectable, not backing off, not going away). */
  readonly available: boolean;
  /** Where its calls go now (opening a connection if needed). */
  connection(): CallTarget;
}

/** What an endpoint is made of. */
export interface ProviderEndpointInit {
  readonly host: string;
  readonly port: number;
  readonly weight: number;
  readonly startTime: number;
  /** The registry record it was made from (direct addresses and in-process have synthetic ones). */
  readonly record: ProviderRecord | undefined;
  readonly transport: string;
  readonly link: EndpointLink;
}

export class ProviderEndpoint implements ClusterEndpoint {
  readonly address: string;
  readonly stats: EndpointStatsRecorder = createEndpointStats({ now: tickMonotonic });
  /** Its requests and accepts for adaptive throttling (the `throttle` attempt filter). */
  readonly throttle: AdaptiveThrottle = createAdaptiveThrottle({ now: tickNow });
  readonly host: string;
  readonly port: number;
  weight: number;
  startTime: number;
  /** The registry record it was made from (direct addresses and in-process have synthetic ones). */
  record: ProviderRecord | undefined;
  readonly transport: string;
  readonly link: EndpointLink;

  constructor(init: ProviderEndpointInit) {
    this.host = init.host;
    this.port = init.port;
    this.weight = init.weight;
    this.startTime = init.startTime;
    this.record = init.record;
    this.transport = init.transport;
    this.link = init.link;
    this.address =
      init.transport === IN_PROCESS ? IN_PROCESS : transportAddress(init.host, init.port, init.transport);
  }

  /** The address an endpoint made from `record` has (its key in a directory and in the pool). */
  static addressOf(record: ProviderRecord): string {
    const transport = record.transport ?? DEFAULT_TRANSPORT;
    return transport === IN_PROCESS ? IN_PROCESS : transportAddress(record.host, record.port, transport);
  }

  static fromRecord(record: ProviderRecord, link: EndpointLink): ProviderEndpoint {
    return new ProviderEndpoint({
      host: record.host,
      port: record.port,
      weight: record.weight,
      startTime: record.startTime,
      record,
      transport: record.transport ?? DEFAULT_TRANSPORT,
      link,
    });
  }

  get available(): boolean {
    return this.link.available;
  }

  send(call: OutboundCall): void {
    // server.auth.registryToken: the token this provider published with its record goes with the call
    const token = this.record?.token;
    if (token !== undefined || call.attachments?.[REGISTRY_TOKEN_ATTACHMENT] !== undefined) {
      const { [REGISTRY_TOKEN_ATTACHMENT]: _other, ...rest } = call.attachments ?? {};
      (call as { attachments: Attachments | undefined }).attachments =
        token === undefined ? rest : { ...rest, [REGISTRY_TOKEN_ATTACHMENT]: token };
    }
    this.link.connection().send(call);
  }
}
