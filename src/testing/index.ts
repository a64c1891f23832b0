/**
 * `callisto/testing`: unit-test a consumer against provider implementations, with no socket and no
 * registry server, and with the failures production brings (error codes, latency, a provider down),
 * deterministically. The apps of a kit are real Callisto apps: calls go through the same filters, the
 * same cluster strategy and balancer, the same frame codec, over the in-memory transport; providers are
 * found through an in-memory registry.
 *
 *   const kit = createTestKit();
 *   const payments = await kit.provider(PaymentsDef, fakePayments);
 *   const other = await kit.provider(PaymentsDef, fakePayments);
 *   const app = await kit.consumer();
 *   const ref = app.refer(PaymentsDef);
 *   payments.fail('charge', 'Overloaded');      // failover: `other` answers
 *   other.delay('charge', 'forever');           // until the caller's deadline: Timeout
 *   await payments.down();                      // connections refused; still listed, as after a crash
 *   other.silence();                            // a partition: nothing gets through until speak()
 *   await kit.close();
 *
 * Kit consumers balance with `roundrobin` unless told otherwise (so which provider gets a call does not
 * depend on chance), keep no snapshot files, read no config file or environment, and log nothing unless
 * given a `logLevel` or a `logger`.
 */
import { type AppOptions, type CallistoApp, callisto } from '../app/callisto-app.js';
import type { ErrorCodeName } from '../core/rpc-error.js';
import type { ServiceDefinition } from '../service/define-service.js';
import type { Implementation } from '../service/service-types.js';
import { createMemoryNetwork, createMemoryTransport, type MemoryNetwork } from '../transport/memory.js';
import { createFaultPlan, type ReceivedCall } from './faults.js';
import { createKitStore, type KitStore } from './kit-registry.js';
import { type StreamFaults, withStreamFaults } from './stream-faults.js';

export type { ReceivedCall } from './faults.js';
export type { StreamFaults } from './stream-faults.js';

/** The registry address of every app of a kit. */
export const KIT_REGISTRY = 'kit://kit:1';

export interface TestProviderOptions {
  /** Names the provider in messages and `calls`. Default `provider-1`, `provider-2`, … */
  name?: string;
  /** More options of the provider's app (filters, limits, a weight in `server`). */
  app?: AppOptions;
}

/** A provider of the kit, and the failures it can be made to have. */
export interface TestProvider {
  readonly name: string;
  /** Its app (a real Callisto app on the kit's in-memory network). */
  readonly app: CallistoApp;
  /** `memory://…`: where consumers reach it. */
  readonly address: string;
  /** The calls it received, in order (those it failed included). */
  readonly calls: readonly ReceivedCall[];
  /**
   * From now on, calls of `method` (`'*'`: every method) fail with `code` (as the provider would throw
   * an RpcError of that code), for `times` calls or until `heal`; with `share` (0 to 1), only that
   * share of the calls, spread evenly (0.05: every 20th call).
   */
  fail(
    method: string,
    code: ErrorCodeName,
    options?: { times?: number; message?: string; share?: number },
  ): this;
  /**
   * From now on, calls of `method` answer `ms` later, or never (`'forever'`: until their deadline, a
   * cancel, or `heal`), for `times` calls or until `heal`; with `share` (0 to 1), only that share of
   * the calls, spread evenly (0.05: every 20th call: "5% of the calls stall for 1 s").
   */
  delay(method: string, ms: number | 'forever', options?: { times?: number; share?: number }): this;
  /**
   * From now on, streams of `method` (a stream method; `'*'`: every one) meet `faults` — messages
   * dropped (`drop(index, message)`), each delayed (`delayMs`), the stream cut with a `Network` error
   * after `cutAfter` messages — for `times` streams or until `heal`. They apply to the messages the
   * consumer receives (server and two-way streams) or the handler reads (client streams).
   */
  streamFault(method: string, faults: StreamFaults, options?: { times?: number }): this;
  /** Clears the faults of `method` (all, when omitted); calls held forever go on. */
  heal(method?: string): this;
  /**
   * Its link goes silent, as in a partition: nothing reaches it or comes from it, its connections stay
   * open (its calls go on running), until `speak`, which delivers what was held, in order.
   */
  silence(): this;
  /** Ends `silence`: what was sent meanwhile, either way, is delivered. */
  speak(): this;
  /** Crashes: its connections close and new ones are refused; it stays listed, as until a TTL expires. */
  down(): Promise<void>;
  /** Comes back at the same address (after `down`). */
  up(): Promise<void>;
  /** Stops gracefully: unregisters, says "going away", drains. */
  stop(): Promise<void>;
}

export interface TestKit {
  /** Starts a provider of `definition` on the kit's network, registered in the kit's registry. */
  provider<T>(
    definition: ServiceDefinition<T>,
    implementation: Implementation<T>,
    options?: TestProviderOptions,
  ): Promise<TestProvider>;
  /** An app whose references find the kit's providers (it may provide services too). */
  consumer(options?: AppOptions): Promise<CallistoApp>;
  /** The kit's in-memory network (its listeners). */
  readonly network: MemoryNetwork;
  /** Closes every app of the kit. */
  close(): Promise<void>;
}

/** A kit: an in-memory network and registry of its own, apart from every other kit. */
export function createTestKit(base: AppOptions = {}): TestKit {
  const network = createMemoryNetwork();
  const store: KitStore = createKitStore();
  const apps = new Set<CallistoApp>();
  const plans = new Set<{ heal(): void }>();
  let count = 0;

  const appOf = async (options: AppOptions): Promise<CallistoApp> => {
    const merged: AppOptions = {
      logLevel: 'silent',
      ...base,
      ...options,
      registry: KIT_REGISTRY,
      load: { configFile: false, env: false, ...base.load, ...options.load },
      consumer: { loadbalance: 'roundrobin', snapshotDir: '', ...base.consumer, ...options.consumer },
      extend: (extensions) => {
        extensions.register('transport', 'memory', () => createMemoryTransport(network));
        extensions.register('registry', 'kit', store.factory);
        base.extend?.(extensions);
        options.extend?.(extensions);
      },
    };
    const app = await callisto(merged);
    apps.add(app);
    return app;
  };

  return {
    network,
    async provider(definition, implementation, options = {}) {
      const name = options.name ?? `provider-${++count}`;
      const plan = createFaultPlan(name);
      plans.add(plan);
      const start = async (port: number): Promise<CallistoApp> => {
        const app = await appOf({
          application: name,
          ...options.app,
          server: { ...base.server, ...options.app?.server, transport: 'memory', port },
          filters: {
            ...options.app?.filters,
            provider: [
              ...(base.filters?.provider ?? []),
              ...(options.app?.filters?.provider ?? []),
              plan.filter,
            ],
          },
        });
        app.provide(
          definition,
          withStreamFaults(definition, implementation as object, plan.takeStream) as typeof implementation,
        );
        await app.start();
        return app;
      };
      let app = await start(0);
      const port = app.port!;
      const address = app.address!;
      /** Where consumers connect to (`memory://host:port`): the link `silence` cuts. */
      const linkHost = address.slice(address.indexOf('://') + 3, address.lastIndexOf(':'));
      let crashed: CallistoApp | undefined;
      const provider: TestProvider = {
        name,
        get app() {
          return app;
        },
        address,
        calls: plan.calls,
        fail(method, code, failOptions = {}) {
          plan.fail(method, code, failOptions.message, failOptions.times, failOptions.share);
          return provider;
        },
        delay(method, ms, delayOptions = {}) {
          plan.delay(method, ms, delayOptions.times, delayOptions.share);
          return provider;
        },
        streamFault(method, faults, streamOptions = {}) {
          plan.streamFault(method, faults, streamOptions.times);
          return provider;
        },
        heal(method) {
          plan.heal(method);
          return provider;
        },
        silence() {
          network.silence(linkHost, port, true);
          return provider;
        },
        speak() {
          network.silence(linkHost, port, false);
          return provider;
        },
        async down() {
          if (crashed !== undefined) return;
          crashed = app;
          // a crash says no goodbye: the registry keeps the entry (a real one, until its TTL)
          store.crash(name);
          app.destroy();
          apps.delete(app);
          await new Promise((resolve) => setImmediate(resolve));
        },
        async up() {
          if (crashed === undefined) return;
          crashed = undefined;
          store.revive(name);
          app = await start(port);
        },
        async stop() {
          await app.close();
          apps.delete(app);
        },
      };
      return provider;
    },
    consumer: (options = {}) => appOf(options),
    async close() {
      // calls held 'forever' would hold up the providers' graceful close
      for (const plan of plans) plan.heal();
      const open = [...apps];
      apps.clear();
      await Promise.all(open.map((app) => app.close()));
    },
  };
}
