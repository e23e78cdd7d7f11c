/**
 * An agent starts a run one way: `execute`, `decide`, `resume` and a chat turn hand their state to
 * `startRun` (src/runtime/agent-runs.ts), which makes the actor and runs it to its outcome; and
 * the agent is built in small pieces (#48: `buildAgent` was 197 lines, the start repeated in each).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** The top-level functions of `file` (declared at column 0) with their length in lines. */
function functionLengths(file: string): Array<[string, number]> {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const found: Array<[string, number]> = [];
  lines.forEach((line, start) => {
    const name = /^(?:export )?(?:async )?function\*? (\w+)/.exec(line)?.[1];
    if (!name) return;
    const end = lines.findIndex((l, i) => i > start && l === '}');
    found.push([name, end - start + 1]);
  });
  return found;
}

describe('starting a run', () => {
  it('runs go to their outcome through startRun only (a replay aside: it steers the actor it makes)', () => {
    const calls = sourceFiles('src').flatMap((file) =>
      [...readFileSync(join(root, file), 'utf8').matchAll(/\brunToOutcome\(/g)].map(() =>
        relative('src', file),
      ),
    );
    const outside = calls.filter(
      (file) => !file.endsWith('run-to-outcome.ts') && !file.endsWith('replay-inputs.ts'),
    );
    expect(outside).toEqual(['runtime/agent-runs.ts']);
    const runs = readFileSync(join(root, 'src/runtime/agent-runs.ts'), 'utf8');
    const startRun = runs.slice(runs.indexOf('\nfunction startRun('));
    expect(startRun.slice(0, startRun.indexOf('\n}\n'))).toContain('runToOutcome(');
  });

  it('the files that build an agent and start its runs have no function over 60 lines', () => {
    const files = ['src/runtime/create-agent.ts', 'src/runtime/agent-parts.ts', 'src/runtime/agent-runs.ts'];
    const lengths = files.flatMap((file) =>
      functionLengths(file).map(([name, n]) => [file, name, n] as const),
    );
    expect(lengths.map(([, name]) => name)).toContain('buildAgent');
    expect(lengths.filter(([, , n]) => n > 60)).toEqual([]);
  });
});
