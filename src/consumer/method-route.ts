import type { Serializer } from '../serialization/serializer.js';

/** What a consumer precomputes per method so that a call encodes little. */
export interface MethodRoute {
  /** @internal Encoded service, version, group and method (see protocol/metadata.ts). */
  readonly prefix: Buffer;
  readonly serializer: Serializer;
  /** For error messages. */
  readonly label: string;
}
