/**
 * Side by side, in one process: the same workload (a scripted model that asks for one `echo` tool
 * call per step for N - 1 steps and answers on step N) run by a plain immutable loop (the floor),
 * this library's chart alone (the real `agentLoop` with stub work: what XState costs for its states,
 * microsteps and actors), this library (with a scripted driver, and with the model driver over the
 * same MockLanguageModelV4 the AI SDK gets), the Vercel AI SDK, the OpenAI Agents SDK and LangGraph
 * (LangChain `createAgent`), for N = 1, 5, 10, 100 and 1,000, and 1,000 concurrent runs of N = 5 (time and
 * heap kept by the final results). Ratios are to this library with the model driver: model for
 * model, what a user of `createAgent({ model })` gets. Adapters live in bench/peers/, one per library; each checks that every run made N model
 * calls and N - 1 tool calls, and the counters inside the fake models and tools are checked after
 * every sample, so a broken adapter cannot look fast.
 *
 * Samples are interleaved (one sample of each library per round, rotating the order) so that load
 * from other processes on the machine hits every library alike. No GC is forced between timed
 * samples: a forced full GC (`gc()`) makes the next few milliseconds of every library 2-3x slower,
 * which would bill short samples for it; heap growth is measured after the timing, in runs of its own
 * (with every final result held, GC forced before and after), and shown per run.
 * Each figure is the median of the samples after warm-up; the ratio columns divide by this
 * library's median in the same run. Beside each wall time, the process's CPU time over the same
 * samples (one library runs at a time, so it is that library's): on a loaded machine the wall
 * times also count the waits for a core, which the CPU times leave out.
 */

import { collectGarbage, heapGrowth, median, now, printTable } from './harness';
import { agentMachineAdapter } from './peers/agent-machine';
import { agentMachineModelAdapter } from './peers/agent-machine-model';
import { aiSdkAdapter } from './peers/ai-sdk';
import { chartFloorAdapter } from './peers/chart-floor';
import type { Adapter, Workload } from './peers/common';
import { langGraphAdapter } from './peers/langgraph';
import { openAiAgentsAdapter } from './peers/openai-agents';
import { plainLoopAdapter } from './peers/plain-loop';

const reference = agentMachineModelAdapter;
/**
 * `PEERS=<names>` (comma-separated, case-insensitive parts of the library names) runs only those
 * next to this library: e.g. `PEERS="ai sdk" npm run bench peers`. A library runs faster with fewer
 * other libraries loaded in the process, so compare ratios within one table.
 */
const only = (process.env.PEERS ?? '')
  .split(',')
  .map((p) => p.trim().toLowerCase())
  .filter(Boolean);
const adapters: readonly Adapter[] = [
  plainLoopAdapter,
  chartFloorAdapter,
  agentMachineAdapter,
  agentMachineModelAdapter,
  aiSdkAdapter,
  openAiAgentsAdapter,
  langGraphAdapter,
].filter((a) => a === reference || only.length === 0 || only.some((p) => a.name.toLowerCase().includes(p)));

/** `STEPS=1,10` measures only those run lengths (the sequential rows; the concurrent batch stays N = 5). */
const SEQUENTIAL_STEPS: readonly number[] = process.env.STEPS
  ? process.env.STEPS.split(',').map((n) => {
      const steps = Number(n);
      if (!Number.isInteger(steps) || steps < 1) throw new Error(`STEPS: '${n}' is not a whole number >= 1`);
      return steps;
    })
  : [1, 5, 10, 100, 1_000];
/** A timed sample repeats short runs until it lasts about this long, so timer noise stays small. */
const SAMPLE_MS = 20;
/** Warm-up per library and N: runs until this much time has passed (at least 2 runs; 1 at N = 1,000). */
const WARMUP_MS = 500;
/** Measured time per library and N, spent in as many samples as fit, within [MIN, MAX]. */
const CELL_BUDGET_MS = 1_500;
const MIN_SAMPLES = 3;
const MAX_SAMPLES = 31;
/** Sequential heap growth is measured over runs in a row that hold about this many steps in all. */
const HEAP_STEPS = 1_000;
/** Concurrent batches: `warmupRuns` concurrent runs to warm up, then `samples` timed batches of `runs`. */
const CONCURRENT = { runs: 1_000, steps: 5, samples: 3, warmupRuns: 100 };

type Row = Record<string, string | number>;

interface Cell {
  adapter: Adapter;
  workload: Workload;
  repeat: number;
  samples: number;
  times: number[];
  /** The process's CPU time (ms) of each timed sample, per run as `times`: a loaded machine's wait for a core is not in it. */
  cpus: number[];
  heaps: number[];
}

/** Runs `workload` `count` times in sequence and checks the adapter's call counters moved as they should. */
async function runChecked(cell: Pick<Cell, 'adapter' | 'workload'>, steps: number, count: number) {
  const { counters, name } = cell.adapter;
  const before = { ...counters };
  for (let i = 0; i < count; i++) await cell.workload.run();
  checkCounters(name, before, counters, steps, count);
}

function checkCounters(
  name: string,
  before: { modelCalls: number; toolCalls: number },
  after: { modelCalls: number; toolCalls: number },
  steps: number,
  runs: number,
): void {
  const model = after.modelCalls - before.modelCalls;
  const tools = after.toolCalls - before.toolCalls;
  if (model !== runs * steps || tools !== runs * (steps - 1)) {
    throw new Error(
      `${name}: ${runs} runs of ${steps} steps counted ${model} model calls and ${tools} tool calls ` +
        `(expected ${runs * steps} and ${runs * (steps - 1)})`,
    );
  }
}

/** Interleaves the samples of every cell: round r runs sample r of each cell that still needs one. */
async function interleave(cells: Cell[], sample: (cell: Cell) => Promise<void>): Promise<void> {
  const rounds = Math.max(...cells.map((c) => c.samples));
  for (let round = 0; round < rounds; round++) {
    for (let k = 0; k < cells.length; k++) {
      const cell = cells[(round + k) % cells.length] as Cell;
      if (cell.times.length >= cell.samples) continue;
      await sample(cell);
    }
  }
}

async function sequential(steps: number): Promise<Cell[]> {
  const cells: Cell[] = [];
  for (const adapter of adapters) {
    const workload = await adapter.setup(steps);
    const minWarmup = steps >= 1_000 ? 1 : 2;
    const warmup: number[] = [];
    for (let spent = 0; warmup.length < minWarmup || spent < WARMUP_MS; ) {
      const start = now();
      await runChecked({ adapter, workload }, steps, 1);
      warmup.push(now() - start);
      spent += now() - start;
    }
    // The median warm-up run, not the last: one GC pause must not set the sample size.
    const estimate = median(warmup);
    const repeat = Math.max(1, Math.ceil(SAMPLE_MS / estimate));
    const samples = Math.min(
      MAX_SAMPLES,
      Math.max(MIN_SAMPLES, Math.round(CELL_BUDGET_MS / (estimate * repeat))),
    );
    cells.push({ adapter, workload, repeat, samples, times: [], cpus: [], heaps: [] });
  }
  await interleave(cells, async (cell) => {
    const start = now();
    const cpu = process.cpuUsage();
    await runChecked(cell, steps, cell.repeat);
    cell.times.push((now() - start) / cell.repeat);
    cell.cpus.push(cpuMs(cpu) / cell.repeat);
  });
  // Heap: enough runs in a row to hold about HEAP_STEPS steps of final results, per run.
  const held = Math.max(1, Math.ceil(HEAP_STEPS / steps));
  for (const cell of cells) {
    if (cell.adapter.heap === false) continue;
    const { mib } = await heapGrowth(async () => {
      const results: unknown[] = [];
      for (let i = 0; i < held; i++) results.push(await cell.workload.run());
      return results;
    });
    cell.heaps.push((mib * 1024) / held);
  }
  collectGarbage();
  return cells;
}

/** `runs` concurrent runs of N = 5; checks the counters and resolves with every final result. */
async function batch(cell: Cell, runs: number): Promise<unknown[]> {
  const before = { ...cell.adapter.counters };
  const results = await Promise.all(Array.from({ length: runs }, () => cell.workload.run()));
  checkCounters(cell.adapter.name, before, cell.adapter.counters, CONCURRENT.steps, runs);
  return results;
}

/** Heap growth per run (KiB) of one batch with every final result still held (GC forced before and after). */
async function batchHeap(cell: Cell): Promise<number> {
  return ((await heapGrowth(() => batch(cell, CONCURRENT.runs))).mib * 1024) / CONCURRENT.runs;
}

async function concurrent(): Promise<Cell[]> {
  const cells: Cell[] = [];
  for (const adapter of adapters) {
    const workload = await adapter.setup(CONCURRENT.steps);
    const cell: Cell = {
      adapter,
      workload,
      repeat: 1,
      samples: CONCURRENT.samples,
      times: [],
      cpus: [],
      heaps: [],
    };
    await batch(cell, CONCURRENT.warmupRuns);
    cells.push(cell);
  }
  await interleave(cells, async (cell) => {
    const start = now();
    const cpu = process.cpuUsage();
    await batch(cell, CONCURRENT.runs);
    cell.times.push(now() - start);
    cell.cpus.push(cpuMs(cpu));
  });
  for (const cell of cells) if (cell.adapter.heap !== false) cell.heaps.push(await batchHeap(cell));
  collectGarbage();
  return cells;
}

/** The process's CPU time (user + system) since `since`, in ms. */
function cpuMs(since: NodeJS.CpuUsage): number {
  const { user, system } = process.cpuUsage(since);
  return (user + system) / 1000;
}

function rows(label: string, steps: number, cells: Cell[]): Row[] {
  const ref = cells.find((c) => c.adapter === reference) as Cell;
  const refMs = median(ref.times);
  const refCpu = median(ref.cpus);
  const refHeap = ref.heaps.length ? median(ref.heaps) : 0;
  return cells.map((cell) => {
    const ms = median(cell.times);
    const heap = cell.heaps.length ? median(cell.heaps) : undefined;
    return {
      workload: label,
      library: cell.adapter.name,
      runs: cell.repeat > 1 ? `${cell.samples}×${cell.repeat}` : String(cell.samples),
      'ms/run': ms,
      'µs/step': (ms * 1000) / (label.includes('concurrent') ? CONCURRENT.runs * steps : steps),
      'time ×lib': ms / refMs,
      'CPU ms/run': median(cell.cpus),
      'CPU ×lib': median(cell.cpus) / refCpu,
      'heap KiB/run': heap === undefined ? '' : heap,
      'heap ×lib': heap === undefined || refHeap <= 0 ? '' : heap / refHeap,
    };
  });
}

export default async function run(): Promise<void> {
  console.log('Libraries:');
  for (const adapter of adapters) console.log(`  ${adapter.name}: ${adapter.version}`);
  const started = now();
  const table: Row[] = [];
  for (const steps of SEQUENTIAL_STEPS) {
    table.push(...rows(`N=${steps.toLocaleString('en')}`, steps, await sequential(steps)));
  }
  const concurrentCells = await concurrent();
  table.push(
    ...rows(
      `${CONCURRENT.runs.toLocaleString('en')} × N=${CONCURRENT.steps} concurrent`,
      CONCURRENT.steps,
      concurrentCells,
    ),
  );
  printTable(
    'Same workload side by side: N-step runs (N - 1 echo tool calls), median ms per run after warm-up; ' +
      `concurrent: ms per batch of ${CONCURRENT.runs.toLocaleString('en')} runs; heap: growth per run with the ` +
      `final results held (runs in a row holding about ${HEAP_STEPS.toLocaleString('en')} steps; concurrent: one ` +
      'batch); CPU: the process CPU time of the same samples (on a loaded machine, what the wall times wait ' +
      'for is not in it); ×lib = ratio to agent-machine with the model driver (1.00); runs = samples×runs per sample',
    table,
  );
  console.log(`\n(peers bench took ${((now() - started) / 1000).toFixed(0)} s)`);
}
