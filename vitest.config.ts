import { configDefaults, defineConfig } from 'vitest/config';

/**
 * The test tiers. `npm test` runs the `fast` project: every file but those listed here, and the
 * model-based files run a covering sample of their paths (tests/support/test-tier.ts). `npm run
 * test:all` (what `.ci/run` runs) runs both projects with AM_TEST_TIER=all: every path, every file.
 * Naming files runs them whatever their tier (`npx vitest run tests/distributed`).
 *
 * What the fast tier leaves out: real-part tests that take seconds each (a browser, a worker pool
 * on redis-server, processes killed mid-run, the docs' examples run, the packed package installed
 * into fresh projects), and the example's own model-based test.
 */
const SLOW_FILES = [
  // headless Chromium
  'tests/approval/nested-approval-viewer.test.ts',
  'tests/context/compaction-trace.test.ts',
  'tests/examples/chat-page.test.ts',
  'tests/examples/chat-page-processes.test.ts',
  'tests/examples/react-chat.test.ts',
  'tests/inspect/hostile-viewer.test.ts',
  'tests/inspect/interrupted-calls.test.ts',
  'tests/inspect/run-viewer.test.ts',
  'tests/examples/chat-page-interrupted.test.ts',
  // BullMQ worker pools on redis-server
  'tests/approval/worker-decide.test.ts',
  'tests/distributed/agent-worker.test.ts',
  'tests/distributed/chat-pool.test.ts',
  'tests/distributed/chat-pool-handler.test.ts',
  'tests/distributed/worker-pool.test.ts',
  'tests/distributed/worker-stall.test.ts',
  'tests/once/crash-matrix.test.ts',
  'tests/once/worker-pool-once.test.ts',
  'tests/chat/chat-across-processes.test.ts',
  'tests/chat/chat-handoff-crash.test.ts',
  'tests/distributed/cluster-pool.test.ts',
  'tests/distributed/fencing.test.ts',
  'tests/distributed/job-lost.test.ts',
  'tests/distributed/lean-results.test.ts',
  'tests/distributed/poison-session.test.ts',
  'tests/distributed/pool-drill.test.ts',
  'tests/distributed/redis-cost.test.ts',
  'tests/distributed/settle-drill.test.ts',
  'tests/ledger/ledger-worker.test.ts',
  'tests/upgrade/upgrade-worker.test.ts',
  // child processes: killed mid-run, the CLI, the examples
  'tests/examples/demo.test.ts',
  'tests/examples/http-app.test.ts',
  'tests/examples/inspector.test.ts',
  'tests/examples/subagents.test.ts',
  'tests/inspect/cli.test.ts',
  'tests/persistence/checkpoint-resume.test.ts',
  'tests/persistence/durability.test.ts',
  'tests/persistence/file-session-store-processes.test.ts',
  'tests/replay/replay-cli.test.ts',
  'tests/replay/replay-cli-input.test.ts',
  'tests/upgrade/verify-upgrade-cli.test.ts',
  'tests/once/interrupted-signature.test.ts',
  'tests/once/reconcile.test.ts',
  'tests/replay/replay-recovered.test.ts',
  'tests/ledger/redis-ledger.test.ts',
  'tests/mcp/mcp-server-close.test.ts',
  'tests/once/resume-waits.test.ts',
  // the docs' and README's examples, run (and their links); run it when you touch docs
  'tests/docs/docs.test.ts',
  // the packed package, installed into fresh projects
  'tests/package/packed-package.test.ts',
  // every transition with the example's audit hook (about 1,000 paths; tests/model samples the chart)
  'examples/model-based.test.ts',
];

/**
 * Files the fast tier runs in isolation (a module registry of their own): they mock modules
 * (`vi.mock`), or other test files import them (their suites register when they are first imported).
 * The rest of the fast tier shares one registry per worker (`isolate: false`), which halves `npm
 * test`: importing the library once per file was most of its time. `test:all` isolates every file.
 */
const ISOLATED_FILES = [
  'tests/loop/idle-actors.test.ts',
  'tests/state/error-classes.test.ts',
  'tests/telemetry/spans.test.ts',
  'tests/persistence/journal.contract.test.ts',
  'tests/persistence/journal-damage.test.ts',
  'tests/persistence/session-store.contract.test.ts',
];
const everything = process.env.AM_TEST_TIER === 'all';

export default defineConfig({
  test: {
    // Installs (or names) the programs from Debian's packages that some tests drive: tests/support/test-tools.ts.
    globalSetup: ['tests/support/global-setup.ts'],
    testTimeout: 20_000,
    // The JSON report feeds the summary line of .ci/run.
    reporters: ['default', ['json', { outputFile: 'test-output/vitest.json' }]],
    projects: [
      {
        extends: true,
        test: {
          name: 'fast',
          include: ['tests/**/*.test.ts', 'src/**/*.test.ts', 'examples/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...SLOW_FILES, ...ISOLATED_FILES],
          isolate: everything,
        },
      },
      { extends: true, test: { name: 'fast-isolated', include: ISOLATED_FILES } },
      { extends: true, test: { name: 'slow', include: SLOW_FILES } },
    ],
  },
});
