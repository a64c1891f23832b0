import type { ErrorCodeName, RpcError } from '../core/rpc-error.js';
import { createEndpointStats, type EndpointStatsRecorder } from '../loadbalance/endpoint-stats.js';
import type { Endpoint } from '../loadbalance/load-balancer.js';
import type { ProviderRecord } from '../registry/provider-record.js';
import { DEFAULT_TRANSPORT, transportAddress } from '../transport/transport.js';
import type { PoolHandle } from './connection-pool.js';

/** Errors that say something about a provider's health (business errors do not). */
const UNHEALTHY: ReadonlySet<ErrorCodeName> = new Set(['Network', 'Timeout', 'Overloaded', 'Internal']);

/** Told when a call to a provider starts and how it ended (its counters and health). */
export interface CallTracker {
  callStarted(): void;
  callEnded(latencyMs: number, error: RpcError | undefined): void;
}

/** What the endpoint reports outcomes to (the directory's outlier detector). */
export interface OutcomeRecorder {
  record(address: string, ok: boolean): void;
}

/**
 * One provider as the consumer's cluster layer sees it: where it is, its weight, its live counters, and
 * its pool handle. It is the connection's call tracker, so counters are kept without extra promises.
 */
export class ProviderEndpoint implements Endpoint, CallTracker {
  readonly address: string;
  readonly stats: EndpointStatsRecorder = createEndpointStats();
  /** Set by the cluster layer: where outcomes go. */
  health: OutcomeRecorder | undefined = undefined;
  /** Set on first use by the cluster layer. */
  handle: PoolHandle | undefined = undefined;

  constructor(
    readonly host: string,
    readonly port: number,
    public weight: number,
    public startTime: number,
    public record: ProviderRecord | undefined,
    /** The transport to connect with (the record's, `tcp` when it names none). */
    readonly transport: string = DEFAULT_TRANSPORT,
  ) {
    this.address = transportAddress(host, port, transport);
  }

  static fromRecord(record: ProviderRecord): ProviderEndpoint {
    return new ProviderEndpoint(
      record.host,
      record.port,
      record.weight,
      record.startTime,
      record,
      record.transport,
    );
  }

  callStarted(): void {
    this.stats.begin();
  }

  callEnded(latencyMs: number, error: RpcError | undefined): void {
    const healthy = error === undefined || !UNHEALTHY.has(error.code);
    this.stats.end(latencyMs, healthy);
    this.health?.record(this.address, healthy);
  }
}
