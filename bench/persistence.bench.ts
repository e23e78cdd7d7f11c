/**
 * The cost of checkpointing: an execution of 200 steps saved after every step (save(state_i) with
 * the version the previous save returned), for each SessionStore, against the same 200 steps with
 * no store. Steps are built as in state.bench.ts. A save appends what changed since the previous
 * one (the checkpoint journal); the table gives the mean over the 200 saves and the last one.
 * Then the journal's own figures (persistence-journal.ts).
 * The file and SQLite stores write to os.tmpdir() and flush to disk on every save (fsync; SQLite
 * synchronous=FULL), so their figures depend on that disk.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentState } from '../src/index';
import {
  FileSessionStore,
  InMemorySessionStore,
  type SessionStore,
  SqliteSessionStore,
} from '../src/persistence/index';
import { collectGarbage, median, now, printTable } from './harness';
import { journalFigures } from './persistence-journal';
import { appendToolStep, libraryAgent, question } from './workload';

const STEPS = 200;
const RUNS = 5;

interface RunResult {
  totalMs: number;
  saveMs: number[];
}

/** One execution of STEPS steps, saved after each step when a store is given. */
async function execution(store: SessionStore | null, sessionId: string): Promise<RunResult> {
  const saveMs: number[] = [];
  const start = now();
  let state = AgentState.empty().withSystemPrompt('bench').withUserMessage('go').withExecutionStarted();
  let version: number | null = null;
  for (let i = 0; i < STEPS; i++) {
    state = appendToolStep(state, i);
    if (store) {
      const before = now();
      version = await store.save(sessionId, state, version);
      saveMs.push(now() - before);
    }
  }
  if (store && version !== STEPS) throw new Error(`expected version ${STEPS}, got ${version}`);
  return { totalMs: now() - start, saveMs };
}

async function measureStore(store: SessionStore | null, label: string): Promise<RunResult[]> {
  await execution(store, `${label}-warmup`);
  const results: RunResult[] = [];
  for (let r = 0; r < RUNS; r++) {
    collectGarbage();
    results.push(await execution(store, `${label}-run-${r}`));
  }
  return results;
}

export default async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-machine-bench-'));
  try {
    const stores: [string, () => SessionStore][] = [
      ['InMemorySessionStore', () => new InMemorySessionStore()],
      ['FileSessionStore', () => new FileSessionStore(join(dir, 'files'))],
      ['SqliteSessionStore', () => new SqliteSessionStore(join(dir, 'sessions.db'))],
    ];
    const baseline = median((await measureStore(null, 'none')).map((r) => r.totalMs));
    const rows: Record<string, string | number>[] = [
      {
        store: 'no store',
        'ms per execution': baseline,
        'ms per save (mean)': '-',
        'ms, save at step 200': '-',
        'µs per step overhead': 0,
        'ratio to no store': 1,
      },
    ];
    for (const [name, create] of stores) {
      const store = create();
      try {
        const results = await measureStore(store, name);
        const total = median(results.map((r) => r.totalMs));
        rows.push({
          store: name,
          'ms per execution': total,
          'ms per save (mean)': median(results.map((r) => r.saveMs.reduce((a, b) => a + b, 0) / STEPS)),
          'ms, save at step 200': median(results.map((r) => r.saveMs[STEPS - 1] ?? 0)),
          'µs per step overhead': ((total - baseline) * 1000) / STEPS,
          'ratio to no store': total / baseline,
        });
      } finally {
        await store.close();
      }
    }
    const size = JSON.stringify(
      Array.from({ length: STEPS }).reduce<AgentState>(
        (state, _, i) => appendToolStep(state, i),
        AgentState.empty().withSystemPrompt('bench').withUserMessage('go').withExecutionStarted(),
      ),
    ).length;
    printTable(
      `Save after every step of a ${STEPS}-step execution (median of ${RUNS}; state at step ${STEPS}: ${(size / 1024).toFixed(0)} KiB; files in ${tmpdir()})`,
      rows,
    );
    await agentRuns(stores);
    await journalFigures(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The same through the runtime: a 200-step agent run (scripted driver, one trivial tool) with
 * `execute(state, { sessionId })` on each store, against the run without a store.
 */
async function agentRuns(stores: [string, () => SessionStore][]): Promise<void> {
  const runOnce = async (store: SessionStore | undefined, sessionId: string) => {
    const agent = libraryAgent(STEPS, store);
    const start = now();
    const state = await agent.execute(question(), store ? { sessionId } : {});
    if (state.stepCount() !== STEPS) throw new Error(`expected ${STEPS} steps, got ${state.stepCount()}`);
    return now() - start;
  };
  const timesFor = async (store: SessionStore | undefined, label: string) => {
    await runOnce(store, `${label}-warmup`);
    const times: number[] = [];
    for (let r = 0; r < RUNS; r++) {
      collectGarbage();
      times.push(await runOnce(store, `${label}-${r}`));
    }
    return median(times);
  };
  const baseline = await timesFor(undefined, 'none');
  const rows: Record<string, string | number>[] = [
    {
      store: 'no store',
      'ms per run': baseline,
      'µs per step': (baseline * 1000) / STEPS,
      'ratio to no store': 1,
    },
  ];
  for (const [name, create] of stores) {
    const store = create();
    try {
      const ms = await timesFor(store, `agent-${name}`);
      rows.push({
        store: name,
        'ms per run': ms,
        'µs per step': (ms * 1000) / STEPS,
        'ratio to no store': ms / baseline,
      });
    } finally {
      await store.close();
    }
  }
  printTable(`A ${STEPS}-step agent run checkpointing after every step (median of ${RUNS})`, rows);
}
