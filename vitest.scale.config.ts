import { defineConfig } from 'vitest/config';

/**
 * `npm run test:scale`: the scale scenarios (test/scale/), apart from `npm test` (minutes of heavy
 * load on every engine). One file, run alone: the measurements need the machine to themselves.
 */
export default defineConfig({
  test: {
    include: ['test/scale/**/*.test.ts'],
    testTimeout: 900_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 1,
    env: { CALLISTO_AGENT_TIMEOUT_MS: '600000', CALLISTO_AGENT_READY_MS: '180000' },
  },
});
