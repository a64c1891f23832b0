/**
 * `echo(reference)`: does this service answer? A call of the `$echo` method every provided service has
 * (core/echo.ts), through the reference's filters, routing and cluster, and on the provider through
 * its filters (auth and access rules included), without calling the service's business code. Resolves
 * with the value sent, or rejects as a call of the service would (`Unauthorized`, `NoProvider`, …).
 */
import { ECHO_METHOD } from '../core/echo.js';
import type { Remote } from '../service/service-types.js';
import { callMethodOf } from './reference.js';

export function echo<T, V = string>(reference: Remote<T>, value: V = 'echo' as V): Promise<V> {
  return callMethodOf(reference as object, ECHO_METHOD, [value]) as Promise<V>;
}
