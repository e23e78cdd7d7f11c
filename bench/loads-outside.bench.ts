/**
 * Loads as someone outside the project measures them (issue 50 item 3): a script that uses only the
 * package's public entry loads a 100- and a 1,000-step session from SQLite and from files, each in a
 * fresh process, against `JSON.parse` of the same state's JSON in that process. The project's own
 * bench (`persistence-loads`) loads in one warm process, rounds after rounds; here every load is
 * the first of its process: code not yet compiled by the JIT, the store opened for it.
 *
 * The sessions are made by runs of `agent.execute` (a scripted model asks for one `lookup` call a
 * step, the tool returns a different ~1 KiB text, a checkpoint after every step). Each sample is one
 * child process (`bench/loads-outside-child.ts`): it imports the entry, reads the state's JSON text
 * from a file, and five times times `JSON.parse` of it, then a store made and `load(id)` awaited.
 * Ratios are per pair; medians of the first pairs (the process's first load: its code not yet
 * compiled, and for SQLite better-sqlite3 loaded) and of the others, over OUTSIDE_ROUNDS (default
 * 7) processes a cell, cells interleaved.
 * The entry: the built one (`dist/index.js`, after `npm run build`) when it exists, else
 * `src/index.ts` through tsx (the same code, not bundled); LOADS_ENTRY=src|dist chooses.
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as library from '../src/index';
import { median, printTable } from './harness';
import { run } from './persistence-loads.bench';

const here = dirname(fileURLToPath(import.meta.url));

/** The entry a child imports: the built one when there is one (or as LOADS_ENTRY says). */
export function outsideEntry(): string {
  const built = resolve(here, '../dist/index.js');
  const wanted = process.env.LOADS_ENTRY;
  if (wanted === 'dist' || (wanted !== 'src' && existsSync(built))) return built;
  return resolve(here, '../src/index.ts');
}

/** One process's pairs: `[parse ms, parse CPU ms, load ms, load CPU ms]`, its first load first. */
function sample(entry: string, kind: string, dir: string, steps: number): number[][] {
  const out = execFileSync(
    process.execPath,
    ['--import', 'tsx', join(here, 'loads-outside-child.ts'), entry, kind, dir, String(steps)],
    { encoding: 'utf8' },
  );
  return JSON.parse(out.trim().split('\n').pop() as string) as number[][];
}

const ratio = (pair: readonly number[], cpu: boolean) =>
  cpu ? (pair[3] as number) / (pair[1] as number) : (pair[2] as number) / (pair[0] as number);

export default async function bench(): Promise<void> {
  const rounds = Number(process.env.OUTSIDE_ROUNDS ?? 7);
  const entry = outsideEntry();
  const dir = await mkdtemp(join(tmpdir(), 'agent-machine-loads-outside-'));
  const kinds = ['SQLite', 'file'] as const;
  try {
    for (const steps of [100, 1000]) {
      const sqlite = new library.SqliteSessionStore(join(dir, 'sessions.db'));
      const { state } = await run(library, sqlite, `load-${steps}`, steps);
      await sqlite.close();
      const files = new library.FileSessionStore(join(dir, 'files'));
      await run(library, files, `load-${steps}`, steps);
      await files.close();
      await writeFile(join(dir, `state-${steps}.json`), JSON.stringify(state));
    }
    const rows: Record<string, string | number>[] = [];
    for (const steps of [100, 1000]) {
      const samples = new Map<string, number[][][]>(kinds.map((k) => [k, []]));
      for (let r = 0; r < rounds; r++)
        for (const kind of r % 2 ? [...kinds].reverse() : kinds)
          samples.get(kind)?.push(sample(entry, kind, dir, steps));
      for (const kind of kinds) {
        const processes = samples.get(kind) ?? [];
        const firsts = processes.map((pairs) => pairs[0] as number[]);
        const later = processes.flatMap((pairs) => pairs.slice(1));
        // process.cpuUsage() may read 0 for a short parse (its clock ticks): such a pair is left out.
        const cpu = (pairs: number[][]) =>
          median(pairs.filter((p) => (p[1] as number) > 0).map((p) => ratio(p, true)));
        rows.push({
          steps,
          store: kind,
          'ms first JSON.parse': median(firsts.map((p) => p[0] as number)),
          'ms first load': median(firsts.map((p) => p[2] as number)),
          'first load / JSON.parse': median(firsts.map((p) => ratio(p, false))),
          'CPU first / JSON.parse': cpu(firsts),
          'ms later JSON.parse': median(later.map((p) => p[0] as number)),
          'ms later load': median(later.map((p) => p[2] as number)),
          'later load / JSON.parse': median(later.map((p) => ratio(p, false))),
          'CPU later / JSON.parse': cpu(later),
        });
      }
    }
    printTable(
      `Loads from outside: the first load of a fresh process (entry ${entry.replace(resolve(here, '..'), '.')}), against JSON.parse of the state's JSON just before it; first: the process's first load (SQLite: loading better-sqlite3 too), later: its 2nd-5th, each by a fresh store (medians over ${rounds} processes a cell)`,
      rows,
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
