/** The check every decorator makes of the definition it is given, where a mistake is still easy to place. */
import { serviceKeyString } from '../core/service-key.js';
import type { ServiceDefinition } from '../service/define-service.js';

/** Throws a TypeError naming the decorator when `value` is not a definition made by `defineService()`. */
export function checkDefinition(decorator: string, value: unknown): ServiceDefinition<unknown> {
  const candidate = value as Partial<ServiceDefinition<unknown>> | null | undefined;
  if (
    typeof candidate !== 'object' ||
    candidate === null ||
    typeof candidate.name !== 'string' ||
    typeof candidate.version !== 'string' ||
    typeof candidate.group !== 'string'
  ) {
    throw new TypeError(
      `${decorator} needs a definition made by defineService(); got ${value === null ? 'null' : typeof value}` +
        (value === undefined
          ? ' (an import cycle can leave a definition undefined when a class is decorated)'
          : ''),
    );
  }
  return candidate as ServiceDefinition<unknown>;
}

export const keyOf = (definition: ServiceDefinition<unknown>): string => serviceKeyString(definition);
