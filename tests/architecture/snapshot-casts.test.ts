/**
 * Workers get what they need of their agent as input (`WorkerInput`), and what must be read live
 * (whether the run is still in progress, a caller's step in flight) is read through the typed
 * agent ref (`AgentRef`, `Actor<typeof agentLoop>`): no source file casts an actor's snapshot to
 * the shape it hopes the agent's context has (#48: there were 8 such casts of the parent's snapshot).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = resolve(__dirname, '../..');

/**
 * Files that may cast a snapshot, and why: the model tests' coverage reads XState's own node list
 * (`_nodes`) of any inspected actor, not an agent's context.
 */
const ALLOWED = new Set(['src/testing/coverage.ts']);

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** `x.getSnapshot() as ...`, `(x.getSnapshot() as ...)`, `x.getSnapshot()) as ...`. */
const SNAPSHOT_CAST = /getSnapshot\(\)\)?\s+as\s/;

describe('snapshot casts', () => {
  it('no file under src/ or machines/ casts an actor snapshot (workers take input; live reads are typed)', () => {
    const casting = [...sourceFiles('src'), ...sourceFiles('machines')]
      .map((file) => relative(root, join(root, file)))
      .filter((file) => !ALLOWED.has(file))
      .flatMap((file) =>
        readFileSync(join(root, file), 'utf8')
          .split('\n')
          .flatMap((line, index) =>
            SNAPSHOT_CAST.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : [],
          ),
      );
    expect(casting).toEqual([]);
  });

  it('catches the casts it is there for', () => {
    for (const cast of [
      'const session = (self.getSnapshot() as { context: LoopContext }).context.session;',
      'const snapshot = self.getSnapshot() as SnapshotFrom<typeof agentLoop>;',
      'const child = (self.getSnapshot() as { children: Record<string, AgentActor> }).children[id];',
    ])
      expect(SNAPSHOT_CAST.test(cast)).toBe(true);
    expect(SNAPSHOT_CAST.test('const { context } = agent.getSnapshot();')).toBe(false);
  });
});
