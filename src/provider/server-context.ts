/**
 * What every connection of one server shares: the service table and options, the serializers it
 * accepts, its limits (connections, execution slots, decoded elements, partial frames, decoding and
 * inflating), and where it reports what it refused or closed.
 */

import type { ByteBudget } from '../protocol/byte-budget.js';
import type { DecodeLimits } from '../serialization/decode-limits.js';
import type { Serializer } from '../serialization/serializer.js';
import type { ScrubbedError } from './entry.js';
import type { LoadReports } from './load-reports.js';
import type { PeerLimits } from './peer-limits.js';
import type { ServerOptions } from './server-options.js';
import type { ServiceTable } from './service-table.js';

/** State shared by every connection of one server. */
export interface ServerContext {
  readonly table: ServiceTable;
  readonly options: ServerOptions;
  /** Accepted serializers by id. */
  readonly serializers: readonly (Serializer | undefined)[];
  /** Used for errors about a serializer we do not accept. */
  readonly fallbackSerializer: Serializer;
  /** Connections, execution slots and the decoded-elements budget, per connection, address and in all. */
  readonly limits: PeerLimits;
  /** Bytes of partial frames, shared by every connection. */
  readonly partialFrames: ByteBudget;
  readonly decodeLimits: DecodeLimits;
  /** The provider's load reports to its consumers (`server.loadReportMs`); none: off. */
  readonly loadReports?: LoadReports | undefined;
  /** Streams open on every connection of the server (bounded by `options.maxOpenStreams`). */
  readonly streams: { open: number };
  /** Told whenever a call ended (wakes a drain once nothing executes). */
  onCallEnded(): void;
  /** Reports a connection closed for a protocol violation (or for being too slow), for logging. */
  onProtocolError(remote: string, error: unknown): void;
  /** Reports a request refused for what it carries (the connection is kept), for logging. */
  onRefused(remote: string, reason: string): void;
  /** Reports a handler's system error that callers were not shown, under `ref`, for logging. */
  onScrubbed(scrubbed: ScrubbedError): void;
}
