import { configDefaults, defineConfig } from 'vitest/config';
import { standardDecorators } from './test/support/standard-decorators.js';

export default defineConfig({
  // Files that use standard decorators (Oxc, Vite's transformer, does not lower them).
  plugins: [standardDecorators(['test/decorators', 'examples/decorators'])],
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
