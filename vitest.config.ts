import { defineConfig } from 'vitest/config';

// Tests import workspace packages from their TypeScript sources (the `source` export condition),
// so `npm test` needs no build step and always tests the code as it is.
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'], externalConditions: ['source'] } },
  test: {
    include: ['packages/*/test/**/*.test.ts', 'scripts/**/*.test.ts', 'eslint-rules/**/*.test.js'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
  },
});
