/**
 * What a consumer knows of one method, shared by all its calls: the service, the method, the serializer
 * its requests are written in. The wire form of the route (service, version, group and method, encoded
 * once, protocol/metadata.ts) belongs to the connection layer: it is made the first time a connection
 * sends the method, and kept here.
 */
import type { ServiceKey } from '../core/service-key.js';
import { encodeRoutePrefix } from '../protocol/metadata.js';
import type { Compressor } from '../serialization/compression/compressor.js';
import { deflateCompressor } from '../serialization/compression/zlib-compressors.js';
import type { Serializer } from '../serialization/serializer.js';
import type { WireRoute } from './pending-call.js';

export class MethodRoute implements WireRoute {
  #prefix: Buffer | undefined;
  /** `Service.method`, for messages. */
  readonly label: string;

  constructor(
    readonly service: ServiceKey,
    readonly method: string,
    readonly serializer: Serializer,
    /** The compressor of its requests and of the answers it takes (`consumer.compressor`). */
    readonly compressor: Compressor = deflateCompressor,
  ) {
    this.label = `${service.name}.${method}`;
  }

  /** @internal The encoded route, made on first use. */
  get prefix(): Buffer {
    this.#prefix ??= encodeRoutePrefix(
      this.service.name,
      this.service.version,
      this.service.group,
      this.method,
    );
    return this.#prefix;
  }
}
