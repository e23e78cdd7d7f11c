/**
 * The checkpoint's cost over whole runs (issue 38): µs a step (wall and the process's CPU) of an
 * N-step run (CHECKPOINT_STEPS, default 400; the persistence-steps workload: one `lookup` call a
 * step, a ~1 KiB result, a save after every step), each store and durability against the same run
 * without a store. `persistence-steps` times a window of 100 steps, where one major GC pause
 * doubles a cell; over a whole run the pauses average out. Cells interleaved over rounds
 * (CHECKPOINT_ROUNDS, default 5, after one warm-up round), medians over rounds. `BASE=<dir>` runs
 * every cell with another checkout's library too (its `src/index.ts`, its own agent), in the same
 * rounds: a change's before and after. Files and databases in os.tmpdir().
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as library from '../src/index';
import { median, printTable } from './harness';
import { run } from './persistence-loads.bench';

type Library = typeof library;
type Open = (lib: Library, path: string) => library.SessionStore | null;

const STORES: readonly [string, Open][] = [
  ['no store', () => null],
  ['memory', (lib) => new lib.InMemorySessionStore()],
  ['file, full', (lib, path) => new lib.FileSessionStore(path)],
  ['file, process', (lib, path) => new lib.FileSessionStore(path, { durability: 'process' })],
  ['SQLite, full', (lib, path) => new lib.SqliteSessionStore(`${path}.db`)],
  ['SQLite, process', (lib, path) => new lib.SqliteSessionStore(`${path}.db`, { durability: 'process' })],
];

async function libraries(): Promise<[string, Library][]> {
  if (!process.env.BASE) return [['this', library]];
  const url = pathToFileURL(resolve(process.env.BASE, 'src/index.ts')).href;
  return [
    ['BASE', (await import(url)) as Library],
    ['this', library],
  ];
}

export default async function bench(): Promise<void> {
  const steps = Number(process.env.CHECKPOINT_STEPS ?? 400);
  const rounds = Number(process.env.CHECKPOINT_ROUNDS ?? 5);
  const libs = await libraries();
  const dir = await mkdtemp(join(tmpdir(), 'agent-machine-checkpoint-'));
  const wall = new Map<string, number[]>();
  const cpu = new Map<string, number[]>();
  let n = 0;
  try {
    for (let round = -1; round < rounds; round++) {
      for (const [store, open] of STORES) {
        for (const [name, lib] of libs) {
          const opened = open(lib, join(dir, `s${n++}`));
          const cpu0 = process.cpuUsage();
          const t0 = performance.now();
          await run(lib, opened, `checkpoint-${n}`, steps);
          const used = process.cpuUsage(cpu0);
          const ms = performance.now() - t0;
          await opened?.close();
          if (round < 0) continue; // warm-up
          const key = `${name}\t${store}`;
          wall.set(key, [...(wall.get(key) ?? []), (ms * 1000) / steps]);
          cpu.set(key, [...(cpu.get(key) ?? []), (used.user + used.system) / steps]);
        }
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const rows = libs.flatMap(([name]) => {
    const unstoredWall = median(wall.get(`${name}\tno store`) ?? []);
    const unstoredCpu = median(cpu.get(`${name}\tno store`) ?? []);
    return STORES.map(([store]) => {
      const w = median(wall.get(`${name}\t${store}`) ?? []);
      const c = median(cpu.get(`${name}\t${store}`) ?? []);
      return {
        library: name,
        store,
        'µs a step': w,
        'x unstored': w / unstoredWall,
        'CPU µs a step': c,
        'CPU x unstored': c / unstoredCpu,
      };
    });
  });
  printTable(
    `A checkpointed step against an unstored one over whole ${steps}-step runs (median of ${rounds} interleaved rounds; files in ${tmpdir()})`,
    rows,
  );
}
