/**
 * Tests import the modules that define what they test, not the main entry: a test importing
 * src/index.ts depends on every module, and `vitest related <file>` could not narrow a change's tests.
 */
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const script = fileURLToPath(new URL('../../scripts/narrow-test-imports.mjs', import.meta.url));

describe('test imports', () => {
  it('name no value or type of the main entry by name (`node scripts/narrow-test-imports.mjs` rewrites them)', () => {
    const run = spawnSync(process.execPath, [script, '--check'], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('would rewrite 0 files\n');
    expect(run.status).toBe(0);
  });
});
