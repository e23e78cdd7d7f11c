/**
 * The house rules of DESIGN.md's layout, checked on the source: folders depend one way
 * (state <- messages, machines, hooks, context <- tools <- ledger <- drivers <- subagents, persistence,
 * telemetry, mcp <- ui <- chat <- runtime and replay <- the rest; the subpath entries above them all),
 * the chart depends on src/state alone, and no file reaches itself through its imports.
 * Type-only imports count: they are dependencies a reader follows too.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { agentLoop } from '../../machines/agentLoop';
import { StateId } from '../../machines/state-ids';

const root = resolve(__dirname, '../..');

/** A folder may import folders of a lower rank only (and itself). */
const RANK: Record<string, number> = {
  state: 0,
  messages: 0.5,
  machines: 1,
  hooks: 1,
  tools: 2,
  ledger: 2.5,
  drivers: 3,
  context: 1,
  subagents: 4,
  persistence: 4,
  telemetry: 4,
  mcp: 4,
  ui: 4.5,
  chat: 4.75,
  runtime: 5,
  replay: 5,
  distributed: 6,
  inspect: 6,
  testing: 6,
  'subpath entries': 7,
  'internal.ts': 7,
  // the main entry's deprecated aliases of names that moved to a subpath entry
  deprecated: 7.5,
  'index.ts': 8,
  'cli.ts': 8,
};

function sourceFiles(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(join(root, path)).isDirectory()) return sourceFiles(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') ? [path] : [];
  });
}

const files = [...sourceFiles('src'), ...sourceFiles('machines')];
const known = new Set(files);

/**
 * The subpath entries of tsup.config.ts (`agent-machine/ui` is src/ui/index.ts): each groups names
 * by audience from any folder below (the chat server's names are `/ui`'s too), as internal.ts does.
 */
const subpathEntries = new Set(
  [...readFileSync(join(root, 'tsup.config.ts'), 'utf8').matchAll(/'(src\/[a-z]+\/index\.ts)'/g)].map(
    (match) => match[1],
  ),
);

function folderOf(file: string): string {
  if (subpathEntries.has(file)) return 'subpath entries';
  const [top, second] = file.split('/');
  return top === 'machines' ? 'machines' : (second ?? '');
}

/**
 * The layer a folder belongs to. `src/replay` is the runtime's layer in a folder of its own:
 * replaying is running (a replay runs the agent's chart through `runToOutcome`), and
 * `agent.replay` / `agent.verifyUpgrade` are the agent's methods, so the two import each other
 * (no file circle still holds). Every other folder is a layer of its own.
 */
const LAYER: Record<string, string> = { replay: 'runtime' };

function layerOf(file: string): string {
  const folder = folderOf(file);
  return LAYER[folder] ?? folder;
}

function importsOf(file: string): string[] {
  const text = readFileSync(join(root, file), 'utf8');
  const targets: string[] = [];
  for (const match of text.matchAll(
    /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+['"](\.{1,2}\/[^'"]+)['"]/g,
  )) {
    const base = relative(root, resolve(root, dirname(file), match[1] as string));
    const target = [base, `${base}.ts`, `${base}/index.ts`].find((candidate) => known.has(candidate));
    if (target) targets.push(target);
  }
  return targets;
}

const graph = new Map(files.map((file) => [file, importsOf(file)]));

describe('the layout', () => {
  it('knows the rank of every folder', () => {
    expect(files.map(folderOf).filter((folder) => RANK[folder] === undefined)).toEqual([]);
  });

  it('folders import only folders below them', () => {
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      for (const target of targets) {
        const from = layerOf(file);
        const to = layerOf(target);
        if (from !== to && (RANK[to] as number) >= (RANK[from] as number))
          upward.push(`${file} -> ${target}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('the chart depends on src/state alone', () => {
    const outside = [...graph]
      .filter(([file]) => file.startsWith('machines/'))
      .flatMap(([file, targets]) =>
        targets
          .filter((t) => !t.startsWith('machines/') && !t.startsWith('src/state/'))
          .map((t) => `${file} -> ${t}`),
      );
    expect(outside).toEqual([]);
  });

  it('no file reaches itself through its imports (no import circle)', () => {
    expect(circles(graph)).toEqual([]);
  });

  it('every state id of machines/state-ids.ts names a state of the chart', () => {
    for (const id of Object.values(StateId)) {
      expect(() => agentLoop.getStateNodeById(id.slice(1)), id).not.toThrow();
    }
  });
});

/**
 * The circles of `graph`, each as the path that closes it (`a -> b -> a`). A depth-first walk: an
 * import of a file still on the walk's path closes a circle; each file is walked once.
 */
function circles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const found: string[] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const walk = (file: string) => {
    path.push(file);
    for (const target of graph.get(file) ?? []) {
      const start = path.indexOf(target);
      if (start >= 0) found.push([...path.slice(start), target].join(' -> '));
      else if (!done.has(target)) walk(target);
    }
    path.pop();
    done.add(file);
  };
  for (const file of graph.keys()) if (!done.has(file)) walk(file);
  return found;
}
