/**
 * The serializer of one method's bodies on one side: the serializer itself, or for a format with bodies
 * per method (protobuf) its `forMethod` view. A method that format cannot carry gets a serializer that
 * refuses to encode or decode, so its calls fail as calls do (a rejected promise, `Serialization`),
 * naming why.
 */
import { messageOf, RpcError } from '../core/rpc-error.js';
import type { ServiceKey } from '../core/service-key.js';
import type { Serializer } from './serializer.js';

export function methodSerializer(
  serializer: Serializer,
  service: ServiceKey,
  method: string,
  side: 'consumer' | 'provider',
): Serializer {
  if (serializer.forMethod === undefined) return serializer;
  try {
    return serializer.forMethod(service, method, side);
  } catch (error) {
    const refuse = (): never => {
      throw new RpcError('Serialization', messageOf(error));
    };
    return { id: serializer.id, name: serializer.name, encode: refuse, decode: refuse };
  }
}
