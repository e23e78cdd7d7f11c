/**
 * A long session (a user's 10,000-step run), through the runtime as bench/persistence-loads.bench.ts
 * `run` drives it (a scripted model asks for one `lookup` call a step, a different ~1 KiB result,
 * a checkpoint after every step), on the SQLite or the file store; then, in a fresh process, the
 * session is loaded, forked at its middle checkpoint and the fork resumed for 10 more steps.
 * Prints: wall time of the run, the mean and median wall and CPU time a step at steps 100-200, the
 * 100 steps before the middle and the last 100 (their ratios: above ~1 plus what the state's size
 * explains is superlinear; the early steps run before the JIT has warmed up, the middle ones after;
 * a GC pause weighs on a mean, not on a median), the store's
 * size on disk, peak RSS of each process (the run's before its state is serialized to measure it),
 * the load time, the fork and the resume.
 *
 * Usage: `node --import tsx bench/long-session.ts sqlite|file [steps=10000]`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import * as lib from '../src/index';
import { FileSessionStore, type JournaledSessionStore, SqliteSessionStore } from '../src/persistence/index';
import { median } from './harness';
import { resultText } from './persistence-journal';
import { mean, run, stepTimes } from './persistence-loads.bench';

const ID = 'long';
const open = (kind: string, dir: string): JournaledSessionStore =>
  kind === 'sqlite'
    ? new SqliteSessionStore(join(dir, 'sessions.db'))
    : new FileSessionStore(join(dir, 'files'));
const peakRssMiB = () => process.resourceUsage().maxRSS / 1024;

async function sizeOf(path: string): Promise<number> {
  const info = await stat(path);
  if (!info.isDirectory()) return info.size;
  let total = 0;
  for (const name of await readdir(path)) total += await sizeOf(join(path, name));
  return total;
}

/** The fresh process: load, fork at the middle checkpoint, resume the fork for 10 steps. */
async function reopen(kind: string, dir: string, steps: number): Promise<void> {
  const store = open(kind, dir);
  let start = performance.now();
  const loaded = await store.load(ID);
  const loadMs = performance.now() - start;
  if (loaded?.state.stepCount() !== steps) throw new Error(`loaded ${loaded?.state.stepCount()} steps`);
  start = performance.now();
  const checkpoints = await store.checkpoints(ID);
  const checkpointsMs = performance.now() - start;
  const middle = checkpoints.find((c) => c.stepNumber === steps / 2);
  if (!middle) throw new Error(`no checkpoint at step ${steps / 2}`);
  start = performance.now();
  await store.fork(ID, middle.version, `${ID}-fork`);
  const forkMs = performance.now() - start;
  const lookup = lib.defineTool({
    description: 'Look something up',
    inputSchema: z.object({ n: z.number() }),
    execute: ({ n }) => resultText(n),
  });
  const until = steps / 2 + 10;
  const agent = lib.createAgent({
    store,
    driver: lib.scriptedDriver([
      (state) => {
        const n = state.stepCount();
        return n < until - 1
          ? { toolCalls: [{ name: 'lookup', args: { n }, id: `fork-${n}` }] }
          : { text: 'done' };
      },
    ]),
    tools: { lookup },
    budget: lib.ExecutionBudget.unlimited(),
  });
  start = performance.now();
  const resumed = await agent.resume(`${ID}-fork`);
  const resumeMs = performance.now() - start;
  if (resumed.stepCount() !== until) throw new Error(`the fork ended at ${resumed.stepCount()} steps`);
  const original = await store.load(ID);
  if (original?.state.stepCount() !== steps) throw new Error('the original changed');
  await store.close();
  console.log(
    JSON.stringify({
      loadMs,
      checkpoints: checkpoints.length,
      checkpointsMs,
      forkMs,
      resumeMs,
      forkSteps: resumed.stepCount(),
      peakRssMiB: peakRssMiB(),
    }),
  );
}

async function main(): Promise<void> {
  const [kind = 'sqlite', stepsArg = '10000', reopenDir] = process.argv.slice(2);
  const steps = Number(stepsArg);
  if (reopenDir) return reopen(kind, reopenDir, steps);
  const dir = await mkdtemp(join(tmpdir(), 'agent-machine-long-'));
  try {
    const store = open(kind, dir);
    const start = performance.now();
    const { calls, cpu, state } = await run(lib, store, ID, steps);
    const wallS = (performance.now() - start) / 1000;
    await store.close();
    // Per window: mean and median µs a step, wall and CPU (a GC pause weighs on a mean only).
    const window = (from: number, to: number) => {
      const wall = stepTimes(calls, from, to);
      const used = stepTimes(cpu, from, to);
      return { mean: [mean(wall), mean(used)], median: [median(wall), median(used)] };
    };
    const early = window(101, 200);
    const middle = window(steps / 2 - 99, steps / 2);
    const late = window(steps - 100, steps - 1);
    const ratio = (a: typeof late, b: typeof late) => ({
      mean: a.mean.map((v, i) => v / (b.mean[i] as number)),
      median: a.median.map((v, i) => v / (b.median[i] as number)),
    });
    const runPeakRssMiB = peakRssMiB();
    const stateKiB = JSON.stringify(state).length / 1024;
    console.log(
      JSON.stringify({
        kind,
        steps,
        wallS,
        stateKiB,
        storeMiB: (await sizeOf(dir)) / 2 ** 20,
        'peak RSS MiB (the run)': runPeakRssMiB,
        'µs a step, steps 100-200 (wall, CPU)': early,
        'µs a step, 100 before the middle (wall, CPU)': middle,
        'µs a step, last 100 (wall, CPU)': late,
        'late / middle (wall, CPU)': ratio(late, middle),
        'late / early (wall, CPU)': ratio(late, early),
      }),
    );
    const child = execFileSync(
      process.execPath,
      ['--import', 'tsx', process.argv[1] as string, kind, stepsArg, dir],
      {
        encoding: 'utf8',
      },
    );
    console.log(`fresh process: ${child.trim()}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
