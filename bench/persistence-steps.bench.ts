/**
 * The checkpoint's own cost (issue 38), per store and durability: the time of each of steps 51-150
 * of a run through `agent.execute(state, { sessionId })` (a scripted model asks for one `lookup`
 * call a step, the tool returns a different ~1 KiB text, the runtime saves after every step),
 * against the same steps of the run without a store. Wall clock and the process's CPU time. The
 * run stops after step 151 (STEP_RUN=1000 runs all 1,000; steps 51-150 are the same steps).
 * Cells:
 * - memory: InMemorySessionStore (the journal's encoding and the runtime's save, no storage);
 * - file / SQLite, durability 'full' (the default: fsync, `synchronous = FULL`) and 'process'
 *   (no fsync, `synchronous = NORMAL`: survives a crash of the process, not a power loss);
 * - file 'full', lockHoldMs 0: the lock file taken and removed at every save, as before the
 *   lock was kept across saves.
 * `BASE=<dir>` adds the unstored run and the memory, file and SQLite stores (both durabilities) of
 * another checkout of the library (its own agent too; ratios against this checkout's unstored
 * step), loaded in the same process: a before/after of a change
 * (`git archive <rev> src machines | tar -x -C <dir>`, and link its node_modules to this one's).
 * Rounds are interleaved (every cell once a round, a new session each) so that all cells see the
 * same machine; each cell's ratio is the median over rounds of (its step / the unstored step of the
 * same round). STEP_ROUNDS=<n> sets the rounds (default 7). Files and databases in os.tmpdir().
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as library from '../src/index';
import { collectGarbage, median, printTable } from './harness';
import { mean, run, stepTimes } from './persistence-loads.bench';

type Library = typeof library;

interface Cell {
  readonly name: string;
  readonly open: (() => library.SessionStore) | null;
  /** The library that runs the agent (another checkout's for BASE cells). */
  readonly lib?: Library;
}

async function baseCells(dir: string): Promise<Cell[]> {
  if (!process.env.BASE) return [];
  const url = pathToFileURL(resolve(process.env.BASE, 'src/index.ts')).href;
  const base = (await import(url)) as Library;
  return [
    { name: 'BASE: no store', open: null, lib: base },
    { name: 'BASE: memory', open: () => new base.InMemorySessionStore(), lib: base },
    { name: 'BASE: file, full', open: () => new base.FileSessionStore(join(dir, 'base-files')), lib: base },
    {
      name: 'BASE: file, process',
      open: () => new base.FileSessionStore(join(dir, 'base-files-process'), { durability: 'process' }),
      lib: base,
    },
    { name: 'BASE: SQLite, full', open: () => new base.SqliteSessionStore(join(dir, 'base.db')), lib: base },
    {
      name: 'BASE: SQLite, process',
      open: () => new base.SqliteSessionStore(join(dir, 'base-process.db'), { durability: 'process' }),
      lib: base,
    },
  ];
}

function cells(dir: string): Cell[] {
  return [
    { name: 'no store', open: null },
    { name: 'memory', open: () => new library.InMemorySessionStore() },
    { name: 'file, full', open: () => new library.FileSessionStore(join(dir, 'files-full')) },
    {
      name: 'file, full, lock per save (lockHoldMs 0)',
      open: () => new library.FileSessionStore(join(dir, 'files-lock'), { lockHoldMs: 0 }),
    },
    {
      name: 'file, process',
      open: () => new library.FileSessionStore(join(dir, 'files-process'), { durability: 'process' }),
    },
    { name: 'SQLite, full', open: () => new library.SqliteSessionStore(join(dir, 'full.db')) },
    {
      name: 'SQLite, process',
      open: () => new library.SqliteSessionStore(join(dir, 'process.db'), { durability: 'process' }),
    },
  ];
}

export default async function bench(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-machine-steps-'));
  try {
    const rounds = Number(process.env.STEP_ROUNDS ?? 7);
    const stepRun = Number(process.env.STEP_RUN ?? 151);
    const all = [...cells(dir), ...(await baseCells(dir))];
    const wall = new Map<string, number[]>(all.map((c) => [c.name, []]));
    const cpu = new Map<string, number[]>(all.map((c) => [c.name, []]));
    const wallRatios = new Map<string, number[]>(all.map((c) => [c.name, []]));
    const cpuRatios = new Map<string, number[]>(all.map((c) => [c.name, []]));
    for (let r = -1; r < rounds; r++) {
      let baseWall = 0;
      let baseCpu = 0;
      for (const cell of all) {
        const store = cell.open?.() ?? null;
        collectGarbage();
        const { calls, cpu: cpus } = await run(cell.lib ?? library, store, `steps-${r}`, stepRun);
        await store?.close();
        if (r < 0) continue; // the warm-up round
        const w = mean(stepTimes(calls, 51, 150));
        const c = mean(stepTimes(cpus, 51, 150));
        if (!cell.open && !cell.lib) [baseWall, baseCpu] = [w, c];
        wall.get(cell.name)?.push(w);
        cpu.get(cell.name)?.push(c);
        wallRatios.get(cell.name)?.push(w / baseWall);
        cpuRatios.get(cell.name)?.push(c / baseCpu);
      }
    }
    printTable(
      `A checkpointed step against an unstored one, steps 51-150 (a ${stepRun}-step run; mean over the steps, median of ${rounds} interleaved rounds; files in ${tmpdir()})`,
      all.map((cell) => ({
        store: cell.name,
        'µs a step': median(wall.get(cell.name) ?? []),
        'x unstored': median(wallRatios.get(cell.name) ?? []),
        'x unstored, each round': (wallRatios.get(cell.name) ?? []).map((x) => x.toFixed(1)).join(' '),
        'CPU µs a step': median(cpu.get(cell.name) ?? []),
        'CPU x unstored': median(cpuRatios.get(cell.name) ?? []),
      })),
    );
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
