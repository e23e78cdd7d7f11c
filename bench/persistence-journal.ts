/**
 * The figures of the checkpoint journal (issue 21), for the durable stores, through the runtime
 * (`agent.execute(state, { sessionId })`, a ~1 KiB tool result per step, a checkpoint per step):
 * - bytes written during a 400-step run (the process's write() bytes from /proc/self/io, so the
 *   WAL and its checkpoints count for SQLite), against the tool results' own bytes;
 * - the cost of a checkpoint early and late in a 2,000-step run (mean and median save time over
 *   steps 100-199 and 1,900-1,999);
 * - the time to load a 1,000-step session.
 * JOURNAL_STEPS=<n> scales the long run down (the old whole-document stores take minutes at 2,000).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { AgentState, createAgent, defineTool, ExecutionBudget, scriptedDriver } from '../src/index';
import {
  FileSessionStore,
  type LoadedSession,
  type SessionStore,
  SqliteSessionStore,
} from '../src/persistence/index';
import { collectGarbage, median, now, printTable } from './harness';

const RESULT_BYTES = 1024;

/** A different ~1 KiB text per step, so that no two results are alike. */
function resultText(n: number): string {
  let text = `result of step ${n}: `;
  let seed = n * 2654435761;
  while (text.length < RESULT_BYTES) {
    seed = (seed * 1103515245 + 12345) >>> 0;
    text += `${(seed % 100000).toString(36)} `;
  }
  return text.slice(0, RESULT_BYTES);
}

const lookup = defineTool({
  description: 'Look something up',
  inputSchema: z.object({ n: z.number() }),
  execute: ({ n }) => resultText(n),
});

/** Records the duration of every save, so a run's checkpoints can be timed one by one. */
class TimedStore implements SessionStore {
  readonly saveMs: number[] = [];
  constructor(private readonly inner: SessionStore) {}
  load(id: string): Promise<LoadedSession | null> {
    return this.inner.load(id);
  }
  async save(id: string, state: AgentState, expected: number | null): Promise<number> {
    const start = now();
    const version = await this.inner.save(id, state, expected);
    this.saveMs.push(now() - start);
    return version;
  }
  delete(id: string): Promise<void> {
    return this.inner.delete(id);
  }
  list(): Promise<string[]> {
    return this.inner.list();
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

async function run(store: SessionStore, sessionId: string, steps: number): Promise<AgentState> {
  const agent = createAgent({
    store,
    driver: scriptedDriver([
      (state) =>
        state.stepCount() < steps - 1
          ? {
              toolCalls: [
                { name: 'lookup', args: { n: state.stepCount() }, id: `call-${state.stepCount()}` },
              ],
            }
          : { text: 'done' },
    ]),
    tools: { lookup },
    budget: ExecutionBudget.unlimited(),
  });
  const state = await agent.execute(AgentState.empty().withUserMessage('go'), { sessionId });
  if (state.stepCount() !== steps) throw new Error(`expected ${steps} steps, got ${state.stepCount()}`);
  return state;
}

/** Bytes this process has passed to write() so far (Linux). */
function writtenBytes(): number {
  const match = /wchar: (\d+)/.exec(readFileSync('/proc/self/io', 'utf8'));
  return Number(match?.[1] ?? Number.NaN);
}

const mean = (values: readonly number[]) => values.reduce((a, b) => a + b, 0) / values.length;

export async function journalFigures(dir: string): Promise<void> {
  const long = Number(process.env.JOURNAL_STEPS ?? 2000);
  const stores: [string, (tag: string) => SessionStore][] = [
    ['FileSessionStore', (tag) => new FileSessionStore(join(dir, `journal-files-${tag}`))],
    ['SqliteSessionStore', (tag) => new SqliteSessionStore(join(dir, `journal-${tag}.db`))],
  ];
  const rows: Record<string, string | number>[] = [];
  for (const [name, create] of stores) {
    // Bytes written in a 400-step run, against the tool results' own bytes.
    const bytesStore = create('bytes');
    const before = writtenBytes();
    await run(bytesStore, 'bytes', 400);
    await bytesStore.close();
    const written = writtenBytes() - before;
    const content = 399 * RESULT_BYTES;

    // Checkpoint cost early and late in a long run.
    const timed = new TimedStore(create('long'));
    await run(timed, 'long', long);
    await timed.close();
    const window = (from: number) => timed.saveMs.slice(from + 1, from + 101); // save 0 is the start
    const early = window(100);
    const late = window(long - 100);

    // Load time of a 1,000-step session (median of 5 loads, each by a fresh store).
    const loadStore = create('load');
    await run(loadStore, 'load', 1000);
    await loadStore.close();
    const loads: number[] = [];
    for (let i = 0; i < 5; i++) {
      const fresh = create('load');
      collectGarbage();
      const start = now();
      const loaded = await fresh.load('load');
      loads.push(now() - start);
      if (loaded?.state.stepCount() !== 1000) throw new Error('the 1,000-step session did not load');
      await fresh.close();
    }
    rows.push({
      store: name,
      'MB written, 400 steps': written / 1e6,
      'x content': written / content,
      'ms/save steps 100-199 (mean, median)': `${mean(early).toFixed(2)}, ${median(early).toFixed(2)}`,
      [`ms/save steps ${long - 100}-${long - 1} (mean, median)`]: `${mean(late).toFixed(2)}, ${median(late).toFixed(2)}`,
      'late/early (mean)': mean(late) / mean(early),
      'ms to load 1,000 steps': median(loads),
    });
  }
  printTable(
    `Checkpoint journal: a ~${RESULT_BYTES}-byte tool result per step, a checkpoint per step through agent.execute (${long}-step run for the cost per save)`,
    rows,
  );
}
