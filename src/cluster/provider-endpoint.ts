import { createEndpointStats, type EndpointStatsRecorder } from '../loadbalance/endpoint-stats.js';
import type { Endpoint } from '../loadbalance/load-balancer.js';
import type { ProviderRecord } from '../registry/provider-record.js';

/** One provider as the consumer's cluster layer sees it: where it is, its weight, and live counters. */
export class ProviderEndpoint implements Endpoint {
  readonly address: string;
  readonly stats: EndpointStatsRecorder = createEndpointStats();

  constructor(
    readonly host: string,
    readonly port: number,
    public weight: number,
    public startTime: number,
    public record: ProviderRecord | undefined,
  ) {
    this.address = `${host}:${port}`;
  }

  static fromRecord(record: ProviderRecord): ProviderEndpoint {
    return new ProviderEndpoint(record.host, record.port, record.weight, record.startTime, record);
  }
}
