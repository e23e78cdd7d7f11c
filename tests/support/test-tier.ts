/**
 * Which tier of the suite runs. `npm test` (a contributor's command) runs the fast tier: the
 * model-based files run a covering sample of their generated paths (`{ covering: true }`: every
 * step of the chart the whole set takes, in a few paths) and vitest.config.ts leaves the slow
 * real-part files out. `npm run test:all` (and `.ci/run`) sets AM_TEST_TIER=all: every path, every file.
 */
export const EVERY_PATH = process.env.AM_TEST_TIER === 'all';

/** The paths a model-based file lists: all of them in the full tier, a covering sample in the fast tier. */
export const PATHS = { covering: !EVERY_PATH } as const;
