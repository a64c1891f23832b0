import type { CallistoApp, ReferenceOptions } from '../../src/index.js';
import { FlakyDef, FlakyImpl, type FlakyService } from '../fixtures/flaky-service.js';
import { testApp } from './apps.js';

export interface ProviderHandle {
  name: string;
  app: CallistoApp;
  impl: FlakyImpl;
  address: string;
}

/** Starts `count` providers of the flaky service, each its own app and port. */
export async function flakyProviders(count: number): Promise<ProviderHandle[]> {
  return Promise.all(
    Array.from({ length: count }, async (_, i) => {
      const name = `p${i}`;
      const impl = new FlakyImpl(name);
      const app = await testApp({ application: name });
      app.provide(FlakyDef, impl);
      await app.start();
      return { name, app, impl, address: app.address! };
    }),
  );
}

export async function flakyConsumer(
  providers: ProviderHandle[],
  options: ReferenceOptions<FlakyService> = {},
  consumer: NonNullable<Parameters<typeof testApp>[0]>['consumer'] = undefined,
) {
  const app = await testApp({ application: 'consumer', ...(consumer === undefined ? {} : { consumer }) });
  const ref = app.refer(FlakyDef, { url: providers.map((p) => p.address), ...options });
  return { app, ref };
}
