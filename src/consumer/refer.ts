/**
 * `refer()`: resolves a reference's options and targets once (reference-state.ts), then builds the
 * typed proxy whose methods are built at their first use (method-runtime.ts), and how the reference is
 * released.
 */

import { createConsumerLimitState } from '../filters/consumer-limit.js';
import { hasLimits } from '../governance/limit-options.js';
import { APPLICATION_ATTACHMENT } from '../governance/provider-limiters.js';
import { ROUTING_TAG_ATTACHMENT } from '../routing/route-rule.js';
import type { ServiceDefinition } from '../service/define-service.js';
import type { Remote } from '../service/service-types.js';
import type { ConsumerContext } from './consumer-context.js';
import { createMethodRuntime } from './method-runtime.js';
import { createReference } from './reference.js';
import type { ReferenceOptions } from './reference-options.js';
import { checkReferenceProtocol } from './reference-protocol.js';
import type { ReferenceHolds, ReferenceState } from './reference-state.js';
import { resolveReferenceTargets } from './reference-targets.js';
import { resolveReferenceOptions } from './resolve-reference-options.js';
import { userFilters } from './user-filters.js';

export function refer<T>(
  consumer: ConsumerContext,
  definition: ServiceDefinition<T>,
  options: ReferenceOptions<T> = {},
): Remote<T> {
  const def = definition as ServiceDefinition<unknown>;
  const { settings, extensions } = consumer;
  const label = `refer(${definition.name})`;
  consumer.mocks.add(definition, definition.methods, options.mockImpl);
  const resolved = resolveReferenceOptions(definition, options, settings.consumer, extensions);
  checkReferenceProtocol(label, options.protocol);
  const base = resolved.reference;
  const mode = options.mock === true ? 'force' : options.mock || undefined;
  const holds: ReferenceHolds = { directories: new Set(), closers: [], released: false };
  const state: ReferenceState = {
    definition: def,
    options: options as ReferenceOptions<unknown>,
    label,
    resolved,
    serializer: consumer.serializers.byName(base.serializer),
    mode,
    targets:
      mode === 'force'
        ? undefined
        : resolveReferenceTargets(def, options as ReferenceOptions<unknown>, {
            extensions,
            appRegistries: settings.registries,
            inProcess: { injvm: base.injvm, provided: consumer.inProcess.provides(def) },
          }),
    filters: userFilters(options.filters ?? [], `${label}.filters`),
    limits: hasLimits(options.limits) ? createConsumerLimitState(label, options.limits!) : undefined,
    announce: options.registerConsumer !== false,
    holds,
  };
  return createReference<T>({
    definition,
    options:
      settings.consumer.sendApplication || options.tag !== undefined
        ? {
            ...options,
            attachments: {
              ...(settings.consumer.sendApplication
                ? { [APPLICATION_ATTACHMENT]: settings.application }
                : {}),
              ...options.attachments,
              // the reference's routing tag (docs/routing.md): every call carries it
              ...(options.tag !== undefined ? { [ROUTING_TAG_ATTACHMENT]: options.tag } : {}),
            },
          }
        : options,
    async release() {
      if (holds.released) return;
      holds.released = true;
      for (const close of holds.closers.splice(0)) {
        close();
        consumer.closers.delete(close);
      }
      const keys = [...holds.directories];
      holds.directories.clear();
      await Promise.all(keys.map((key) => consumer.directories.letGo(key)));
    },
    method: (name) => createMethodRuntime({ consumer, reference: state, name }),
  });
}
