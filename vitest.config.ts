import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts', 'src/**/*.test.ts', 'examples/**/*.test.ts'],
    // Installs (or names) the programs from Debian's packages that some tests drive: tests/support/test-tools.ts.
    globalSetup: ['tests/support/global-setup.ts'],
    testTimeout: 20_000,
    // The JSON report feeds the summary line of .ci/run.
    reporters: ['default', ['json', { outputFile: 'test-output/vitest.json' }]],
  },
});
