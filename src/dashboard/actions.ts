/**
 * The page's actions (disable or enable a provider or the whole service, change a provider's weight,
 * switch a method's mock mode), applied through the registry's runtime control on every registry that
 * lists the service, and the overrides in force, read back for the page.
 */
import type { ServiceKey } from '../index.js';
import { MAX_PROVIDER_WEIGHT } from '../registry/index.js';
import type { RegistryControl, ServiceOverrides } from './sources.js';

export type ActionName = 'disable' | 'enable' | 'weight' | 'mock';

export interface ActionRequest {
  readonly action: ActionName;
  readonly key: ServiceKey;
  readonly provider?: string;
  readonly weight?: number;
  readonly method?: string;
  readonly mode?: 'force' | 'fail' | 'off';
}

/** An action the page asked for that cannot be done as asked: the message says why. */
export class ActionInputError extends Error {
  override name = 'ActionInputError';
}

export interface Actions {
  /** Checks a request body against the key's current providers and methods. */
  check(body: unknown, providers: readonly string[]): ActionRequest;
  apply(request: ActionRequest, registries: readonly string[]): Promise<void>;
  /** The overrides in force, from the first registry that answers (undefined when none lists the key). */
  overrides(key: ServiceKey, registries: readonly string[]): Promise<ServiceOverrides | undefined>;
  close(): Promise<void>;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const ACTIONS: readonly ActionName[] = ['disable', 'enable', 'weight', 'mock'];
const MODES = ['force', 'fail', 'off'] as const;

export function createActions(create: (address: string) => RegistryControl): Actions {
  const controls = new Map<string, RegistryControl>();
  const controlOf = (address: string): RegistryControl => {
    let control = controls.get(address);
    if (!control) {
      control = create(address);
      controls.set(address, control);
    }
    return control;
  };
  const keyOptions = (key: ServiceKey) => ({ version: key.version, group: key.group });

  return {
    check(body, providers) {
      if (!isRecord(body)) throw new ActionInputError('the request is not a JSON object');
      const action = body['action'];
      if (typeof action !== 'string' || !ACTIONS.includes(action as ActionName)) {
        throw new ActionInputError(`"action" must be one of ${ACTIONS.join(', ')}`);
      }
      const { service, version, group } = body;
      if (typeof service !== 'string' || typeof version !== 'string' || typeof group !== 'string') {
        throw new ActionInputError('"service", "version" and "group" must be strings');
      }
      const key = { name: service, version, group };
      const provider = body['provider'];
      if (provider !== undefined && (typeof provider !== 'string' || !providers.includes(provider))) {
        throw new ActionInputError(`${String(provider)} is not a provider of ${service} ${version}`);
      }
      switch (action as ActionName) {
        case 'disable':
        case 'enable':
          return { action: action as ActionName, key, ...(provider === undefined ? {} : { provider }) };
        case 'weight': {
          const weight = body['weight'];
          if (provider === undefined)
            throw new ActionInputError('a weight is set for one provider: give "provider"');
          if (
            typeof weight !== 'number' ||
            !Number.isInteger(weight) ||
            weight < 0 ||
            weight > MAX_PROVIDER_WEIGHT
          ) {
            throw new ActionInputError(`the weight must be an integer from 0 to ${MAX_PROVIDER_WEIGHT}`);
          }
          return { action: 'weight', key, provider, weight };
        }
        case 'mock': {
          const { method, mode } = body;
          if (typeof method !== 'string' || !/^[A-Za-z_$][\w$]*$/.test(method)) {
            throw new ActionInputError('"method" must be a method name');
          }
          if (typeof mode !== 'string' || !(MODES as readonly string[]).includes(mode)) {
            throw new ActionInputError(`"mode" must be one of ${MODES.join(', ')}`);
          }
          return { action: 'mock', key, method, mode: mode as (typeof MODES)[number] };
        }
      }
    },
    async apply(request, registries) {
      const options = keyOptions(request.key);
      const service = request.key.name;
      await Promise.all(
        registries.map((address) => {
          const control = controlOf(address);
          const target =
            request.provider === undefined ? options : { ...options, provider: request.provider };
          if (request.action === 'disable') return control.disable(service, target);
          if (request.action === 'enable') return control.enable(service, target);
          if (request.action === 'weight')
            return control.setWeight(service, request.provider!, request.weight!, options);
          return control.setMock(service, request.method!, request.mode!, options);
        }),
      );
    },
    async overrides(key, registries) {
      let lastError: unknown;
      for (const address of registries) {
        try {
          return await controlOf(address).overrides(key.name, keyOptions(key));
        } catch (error) {
          lastError = error;
        }
      }
      if (lastError !== undefined) throw lastError;
      return undefined;
    },
    async close() {
      const all = [...controls.values()];
      controls.clear();
      await Promise.allSettled(all.map((control) => control.close()));
    },
  };
}
