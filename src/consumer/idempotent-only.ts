/**
 * `refer()`'s guard for strategies that send one call to several providers at once (`forking`, any
 * factory with `idempotentOnly`): such a strategy would execute a non-idempotent call more than once, so
 * a method that is not idempotent may not use it. Checked when the method's runtime is built: at
 * `refer()` for declared methods, at first use for the methods of a definition that declares none.
 */
import type { ClusterFactory } from '../cluster/cluster.js';
import { ConfigError } from '../core/config-error.js';

export interface IdempotentOnlyCheck {
  /** `refer(Service)`. */
  readonly label: string;
  readonly method: string;
  /** The method's resolved strategy name and factory. */
  readonly cluster: string;
  readonly factory: ClusterFactory;
  readonly idempotent: boolean;
  /** The strategy the method's options and the reference's name, if any (else it is the app's). */
  readonly setOn: { readonly method?: string | undefined; readonly reference?: string | undefined };
}

export function checkIdempotentOnly(check: IdempotentOnlyCheck): void {
  if (check.idempotent || check.factory.idempotentOnly !== true) return;
  const { label, method, cluster } = check;
  const { setOn } = check;
  const key =
    setOn.method !== undefined
      ? `${label}.methods.${method}.cluster`
      : setOn.reference !== undefined
        ? `${label}.cluster`
        : 'consumer.cluster';
  throw new ConfigError(
    key,
    cluster,
    `a strategy that sends a call once for ${method} (methods: { ${method}: { cluster: 'failover' } }, or 'failfast'), or ${method} declared idempotent: true`,
    {
      source: key === 'consumer.cluster' ? undefined : `code, ${label} options`,
      problem: `${cluster} calls several providers at once, and ${method} is not idempotent: it would run more than once`,
    },
  );
}
