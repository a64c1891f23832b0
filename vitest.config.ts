import { configDefaults, defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // the scale scenarios run apart: `npm run test:scale` (vitest.scale.config.ts)
    exclude: [...configDefaults.exclude, 'test/scale/**'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    globalSetup: ['test/setup/global-setup.ts'],
  },
});
