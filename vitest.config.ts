import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

const INCLUDE = ['packages/*/test/**/*.test.ts', 'scripts/**/*.test.ts', 'eslint-rules/**/*.test.js'];

/**
 * Files that assert on wall-clock behaviour under real load, so they run one at a time after every
 * other file has finished, with the machine to themselves (as the whole suite once ran):
 * - stream-limits: sends 20 s of frames in real time against the wall-clock frame-rate rule;
 * - video-threads: `GET /health` latency bounds while two video jobs run, and a real-time live
 *   session that must drop no frame;
 * - batcher: a flush timed between 75 ms and 1 s;
 * - the camera test in Chromium: the fake camera never catches up when starved of CPU, so it plays
 *   the face slow and the measured rate is off (docs/capture.md; `.ci/run` runs it on its own).
 */
const ISOLATED = [
  'packages/capture/test/browser.test.ts',
  'packages/server/test/stream-limits.test.ts',
  'packages/server/test/video-threads.test.ts',
  'packages/server/test/batcher.test.ts',
];

/**
 * Two workers even on two cores (vitest's default is cores - 1): much of a file's time is import
 * and setup, or waiting on child processes (ffmpeg, Chromium, servers) and real-time streams, so two
 * files at once overlap that. VITEST_MAX_WORKERS=1 runs every file one at a time again.
 * On PostgreSQL (VITALS_TEST_DATABASE_URL) one file at a time: the files share one database, and
 * kysely's migrator reads every schema's tables (has_schema_privilege on each), which fails with
 * "schema ... does not exist" when another file drops its schema meanwhile.
 */
const WORKERS = process.env.VITALS_TEST_DATABASE_URL ? 1 : Math.max(2, availableParallelism() - 1);

// Tests import workspace packages from their TypeScript sources (the `source` export condition),
// so `npm test` needs no build step and always tests the code as it is. Both projects extend this.
export default defineConfig({
  resolve: { conditions: ['source'] },
  ssr: { resolve: { conditions: ['source'], externalConditions: ['source'] } },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'parallel',
          include: [...INCLUDE, ...ISOLATED.map((f) => `!${f}`)],
          maxWorkers: WORKERS,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: { name: 'isolated', include: ISOLATED, maxWorkers: 1, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
