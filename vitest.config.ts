import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['tests/**/*.test.ts', 'src/**/*.test.ts', 'examples/**/*.test.ts'],
    testTimeout: 20_000,
    // The JSON report feeds the summary line of .ci/run.
    reporters: ['default', ['json', { outputFile: 'test-output/vitest.json' }]],
  },
});
