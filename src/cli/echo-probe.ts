/**
 * `$echo` of one service on one provider, as `callisto doctor` asks it: a real call through the
 * consumer's stack (one attempt, to that address only) and, on the provider, through the service's
 * filters (auth and access rules included), without its business code. A refusal by the provider's
 * filters (`Unauthorized`) still proves the service is there and answers; a provider that does not
 * know the service, or does not answer, does not.
 */
import { type CallistoApp, defineService, echo, RpcError, type ServiceKey } from '../index.js';
import { describeRpcError } from '../tools/rpc-failure.js';

export type EchoProbe =
  | { readonly answered: true; readonly ms: number; readonly refused?: string }
  | { readonly answered: false; readonly problem: string };

export interface EchoProbeInit {
  readonly app: CallistoApp;
  readonly key: ServiceKey;
  /** `host:port` (or `tls://host:port`) of the provider. */
  readonly url: string;
  readonly timeoutMs: number;
}

/** Codes with which a provider's own filters refuse a caller: the service answered. */
const REFUSED_BY_FILTERS = new Set(['Unauthorized', 'RateLimited', 'Overloaded']);

export async function probeEcho(init: EchoProbeInit): Promise<EchoProbe> {
  const { app, key } = init;
  const definition = defineService<Record<string, never>>(key.name, {
    version: key.version,
    ...(key.group === '' ? {} : { group: key.group }),
  });
  const reference = app.refer(definition, {
    url: init.url,
    cluster: 'failfast',
    timeoutMs: init.timeoutMs,
  });
  const started = performance.now();
  try {
    await echo(reference, 'doctor');
    return { answered: true, ms: performance.now() - started };
  } catch (error) {
    if (!RpcError.is(error)) return { answered: false, problem: String(error) };
    if (REFUSED_BY_FILTERS.has(error.code)) {
      return { answered: true, ms: performance.now() - started, refused: describeRpcError(error) };
    }
    return { answered: false, problem: describeRpcError(error) };
  }
}
