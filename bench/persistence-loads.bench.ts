/**
 * Loads and the checkpoint's own cost (issue 38), through the runtime (`agent.execute(state,
 * { sessionId })`: a scripted model asks for one `lookup` call a step, the tool returns a different
 * ~1 KiB text, the runtime saves after every step), for the memory, file and SQLite stores:
 * - load: `store.load(id)` by a fresh store over a session made by a 100- and a 1,000-step run,
 *   against `JSON.parse` of that state's JSON (`JSON.stringify(state)`), which builds no state at all;
 * - step cost: the time of each of steps 51-150 (between two consecutive calls of the model), wall
 *   clock and the process's CPU time, with a store, against the same steps of the run without one.
 *   The run stops after step 151: steps 51-150 of a 1,000-step run are the same steps, as nothing
 *   after them runs before them (STEP_RUN=1000 runs all 1,000).
 * Rounds are interleaved (every cell once a round) so that all cells see the same machine; the
 * figures are medians over rounds; a load's ratio is taken against a JSON.parse run just before it. LOAD_ROUNDS=<n> sets the rounds (default 7). BASE=<dir of
 * another checkout> loads sessions of the same runs with its stores too (its own runs write them,
 * as the stored format may differ), in the same rounds (a change's before and after; the step
 * costs stay this checkout's).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';
import * as library from '../src/index';
import type { StoredSession } from '../src/persistence/index';
import { collectGarbage, median, now, printTable } from './harness';
import { resultText } from './persistence-journal';

type Library = typeof library;
type Store = library.SessionStore;

/** A store kind: `open()` gives a new store over the same storage (a fresh process's store). */
interface Kind {
  readonly name: string;
  open(): Store;
}

function kinds(lib: Library, dir: string, tag: string, documents = new Map<string, StoredSession>()): Kind[] {
  return [
    { name: 'memory', open: () => new lib.InMemorySessionStore({ documents }) },
    { name: 'file', open: () => new lib.FileSessionStore(join(dir, `files-${tag}`)) },
    { name: 'SQLite', open: () => new lib.SqliteSessionStore(join(dir, `sessions-${tag}.db`)) },
  ];
}

/** Runs `steps` steps (a checkpoint after each when `store` is given); the times at which the model was called. */
export async function run(lib: Library, store: Store | null, sessionId: string, steps: number) {
  const calls: number[] = [];
  const cpu: number[] = [];
  const lookup = lib.defineTool({
    description: 'Look something up',
    inputSchema: z.object({ n: z.number() }),
    execute: ({ n }) => resultText(n),
  });
  const agent = lib.createAgent({
    ...(store && { store }),
    driver: lib.scriptedDriver([
      (state) => {
        calls.push(now());
        const usage = process.cpuUsage();
        cpu.push((usage.user + usage.system) / 1000);
        const n = state.stepCount();
        return n < steps - 1
          ? { toolCalls: [{ name: 'lookup', args: { n }, id: `call-${n}` }] }
          : { text: 'done' };
      },
    ]),
    tools: { lookup },
    budget: lib.ExecutionBudget.unlimited(),
  });
  const input = lib.AgentState.empty().withUserMessage('go');
  const state = await agent.execute(input, store ? { sessionId } : {});
  if (state.stepCount() !== steps) throw new Error(`expected ${steps} steps, got ${state.stepCount()}`);
  return { state, calls, cpu };
}

export const stepTimes = (calls: readonly number[], from: number, to: number) => {
  const out: number[] = [];
  for (let i = from; i <= to; i++) out.push(((calls[i] as number) - (calls[i - 1] as number)) * 1000);
  return out;
};
/** The process's CPU time so far, ms (a loaded machine delays the wall clock, not this). */
const cpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};
export const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

/**
 * The figures of `lib` (this library, or another build of it). With `base`, another checkout's
 * stores load sessions of the same runs, written by its own runs, in the same rounds (columns
 * `base …`): a change's before and after.
 */
export async function loadFigures(lib: Library, dir: string, label = '', base?: Library): Promise<void> {
  const rounds = Number(process.env.LOAD_ROUNDS ?? 7);
  const documents = new Map<string, StoredSession>();
  const stores = kinds(lib, dir, label || 'this', documents);
  // The other checkout's stores read sessions its own runs wrote (the stored format may differ).
  const baseStores = base ? kinds(base, dir, `${label}base`) : [];
  const loaders = [
    ...stores.map((k): [string, Kind] => [k.name, k]),
    ...baseStores.map((k): [string, Kind] => [`base ${k.name}`, k]),
  ];

  // Loads at 100 and 1,000 steps.
  const loadRows: Record<string, string | number>[] = [];
  for (const steps of [100, 1000]) {
    const texts: string[] = [];
    for (const kind of stores) {
      const store = kind.open();
      const { state } = await run(lib, store, `load-${steps}`, steps);
      texts.push(JSON.stringify(state));
      await store.close();
    }
    for (const kind of baseStores) {
      const store = kind.open();
      await run(base as Library, store, `load-${steps}`, steps);
      await store.close();
    }
    const text = texts[0] as string;
    const parseTimes: number[] = [];
    const times = new Map<string, number[]>(loaders.map(([name]) => [name, []]));
    // Each load is paired with a JSON.parse just before it (both after a full GC), and the ratio
    // taken within the pair: machine load that comes and goes between cells then cancels out.
    const ratios = new Map<string, number[]>(loaders.map(([name]) => [name, []]));
    const cpuRatios = new Map<string, number[]>(loaders.map(([name]) => [name, []]));
    for (let r = -1; r < rounds; r++) {
      for (const [name, kind] of r % 2 ? [...loaders].reverse() : loaders) {
        collectGarbage();
        let start = now();
        let cpuStart = cpuMs();
        JSON.parse(text);
        const parse = now() - start;
        const parseCpu = cpuMs() - cpuStart;
        const store = kind.open();
        collectGarbage();
        start = now();
        cpuStart = cpuMs();
        const loaded = await store.load(`load-${steps}`);
        const load = now() - start;
        const loadCpu = cpuMs() - cpuStart;
        if (loaded?.state.stepCount() !== steps) throw new Error(`the ${steps}-step session did not load`);
        await store.close();
        if (r < 0) continue;
        parseTimes.push(parse);
        times.get(name)?.push(load);
        ratios.get(name)?.push(load / parse);
        // process.cpuUsage() may read 0 for a short parse (its clock ticks): such a pair is left out.
        if (parseCpu > 0) cpuRatios.get(name)?.push(loadCpu / parseCpu);
      }
    }
    const row: Record<string, string | number> = {
      steps,
      'state JSON, KiB': text.length / 1024,
      'ms JSON.parse': median(parseTimes),
    };
    for (const [name] of loaders) {
      row[`ms load ${name}`] = median(times.get(name) ?? []);
      row[`load / JSON.parse ${name}`] = median(ratios.get(name) ?? []);
      row[`CPU load / JSON.parse ${name}`] = median(cpuRatios.get(name) ?? []);
    }
    loadRows.push(row);
  }
  printTable(
    `${label}Load of a session by a fresh store, against JSON.parse of the state's JSON (ratios: median over ${rounds} interleaved rounds of each load over the parse just before it; CPU: the process's CPU time)`,
    loadRows,
  );

  // The cost of a checkpointed step: steps 51-150 of a 1,000-step run.
  const cells: [string, Kind | null][] = [
    ['no store', null],
    ...stores.map((k) => [k.name, k] as [string, Kind]),
  ];
  const stepRun = Number(process.env.STEP_RUN ?? 151);
  const perStep = new Map<string, number[]>(cells.map(([name]) => [name, []]));
  const ratios = new Map<string, number[]>(cells.map(([name]) => [name, []]));
  const cpuPerStep = new Map<string, number[]>(cells.map(([name]) => [name, []]));
  const cpuRatios = new Map<string, number[]>(cells.map(([name]) => [name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const [name, kind] of cells) {
      const store = kind?.open() ?? null;
      collectGarbage();
      const { calls, cpu } = await run(lib, store, `steps-${r}`, stepRun);
      cpuPerStep.get(name)?.push(mean(stepTimes(cpu, 51, 150)));
      if (kind)
        cpuRatios
          .get(name)
          ?.push(mean(stepTimes(cpu, 51, 150)) / (cpuPerStep.get('no store')?.[r] as number));
      perStep.get(name)?.push(mean(stepTimes(calls, 51, 150)));
      if (kind)
        ratios.get(name)?.push(mean(stepTimes(calls, 51, 150)) / (perStep.get('no store')?.[r] as number));
      await store?.close();
    }
  }
  printTable(
    `${label}µs a step at steps 51-150 (a ${stepRun}-step run; mean over the steps, median of ${rounds} interleaved rounds)`,
    cells.map(([name]) => {
      const values = perStep.get(name) ?? [];
      const ratio = name === 'no store' ? 1 : median(ratios.get(name) ?? []);
      const cpuRatio = name === 'no store' ? 1 : median(cpuRatios.get(name) ?? []);
      return {
        store: name,
        'µs a step': median(values),
        'x unstored (median of round ratios)': ratio,
        'CPU µs a step': median(cpuPerStep.get(name) ?? []),
        'CPU x unstored': cpuRatio,
      };
    }),
  );
}

/** `BASE=<dir of another checkout>` adds its loads beside this one's (see loadFigures). */
export default async function bench(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-machine-loads-'));
  const baseDir = process.env.BASE;
  const base = baseDir
    ? ((await import(pathToFileURL(resolve(baseDir, 'src/index.ts')).href)) as Library)
    : undefined;
  try {
    await loadFigures(library, dir, '', base);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
