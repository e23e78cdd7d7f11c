/**
 * The figures of the checkpoint journal (issue 21), for the durable stores, through the runtime
 * (`agent.execute(state, { sessionId })`, a ~1 KiB tool result per step, a checkpoint per step):
 * - bytes written during a 400-step run (the process's write() bytes from /proc/self/io, so the
 *   WAL and its checkpoints count for SQLite), against the tool results' own bytes;
 * - the cost of a checkpoint early and late in a 2,000-step run: the saves of steps 100-199 of
 *   one session and of steps 1,900-1,999 of another, taken in turns (one early save, one late
 *   save), so that both see the same disk (fsync times on a shared machine vary by 10x from one
 *   second to the next); the sessions are built by saves after every step, as a run makes them;
 * - the time to load a 1,000-step session (median of 5, each by a fresh store, after one untimed).
 * JOURNAL_STEPS=<n> scales the long run down (the old whole-document stores take minutes at 2,000).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import {
  AgentState,
  AgentStep,
  createAgent,
  defineTool,
  ExecutionBudget,
  InferenceResponse,
  Message,
  scriptedDriver,
  ToolExecution,
  Usage,
} from '../src/index';
import { FileSessionStore, type SessionStore, SqliteSessionStore } from '../src/persistence/index';
import { collectGarbage, median, now, printTable } from './harness';

const RESULT_BYTES = 1024;

/** A different ~1 KiB text per step, so that no two results are alike. */
export function resultText(n: number): string {
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

/** Appends one recorded step whose tool returned `resultText(n)`, as the runtime records it. */
function withStep(state: AgentState, n: number): AgentState {
  const call = { id: `call-${n}`, name: 'lookup', args: { n } };
  const text = resultText(n);
  const step = AgentStep.of({
    inputMessages: state.messageList(),
    outputMessages: [Message.assistant('', [call]), Message.toolResult(call, text)],
    inferenceResponse: InferenceResponse.of({
      toolCalls: [call],
      finishReason: 'tool-calls',
      usage: Usage.of({ inputTokens: 10, outputTokens: 5 }),
    }),
    toolExecutions: [ToolExecution.succeeded(call, text, Date.now())],
  });
  return state.withStepStarted().withCurrentStep(step).withCurrentStepRecorded();
}

/** A session saved after each of its first `steps` steps. */
async function grow(store: SessionStore, id: string, steps: number) {
  let state = AgentState.empty().withUserMessage('go').withExecutionStarted();
  let version = await store.save(id, state, null);
  for (let n = 0; n < steps; n++) {
    state = withStep(state, n);
    version = await store.save(id, state, version);
  }
  return { state, version };
}

/** Save times (ms) of steps `early`..`early + 99` of one session and `late`..`late + 99` of another, in turns. */
async function earlyAndLate(store: SessionStore, early: number, late: number) {
  const sessions = [await grow(store, 'early', early), await grow(store, 'late', late)];
  const times: [number[], number[]] = [[], []];
  for (let i = 0; i < 100; i++) {
    for (const [k, id] of ['early', 'late'].entries()) {
      const session = sessions[k] as { state: AgentState; version: number };
      session.state = withStep(session.state, (k === 0 ? early : late) + i);
      const start = now();
      session.version = await store.save(id, session.state, session.version);
      times[k]?.push(now() - start);
    }
  }
  return { early: times[0], late: times[1] };
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
    const longStore = create('long');
    const { early, late } = await earlyAndLate(longStore, 100, long - 100);
    await longStore.close();

    // Load time of a 1,000-step session (median of 5 loads, each by a fresh store).
    const loadStore = create('load');
    await run(loadStore, 'load', 1000);
    await loadStore.close();
    const loads: number[] = [];
    // One load first, untimed: the first in a process also compiles the code it runs.
    for (let i = -1; i < 5; i++) {
      const fresh = create('load');
      collectGarbage();
      const start = now();
      const loaded = await fresh.load('load');
      if (i >= 0) loads.push(now() - start);
      if (loaded?.state.stepCount() !== 1000) throw new Error('the 1,000-step session did not load');
      await fresh.close();
    }
    rows.push({
      store: name,
      'MB written, 400 steps': written / 1e6,
      'x content': written / content,
      'ms/save steps 100-199 (mean, median)': `${mean(early).toFixed(2)}, ${median(early).toFixed(2)}`,
      [`ms/save steps ${long - 100}-${long - 1} (mean, median)`]: `${mean(late).toFixed(2)}, ${median(late).toFixed(2)}`,
      'late/early (mean, median)': `${(mean(late) / mean(early)).toFixed(2)}, ${(median(late) / median(early)).toFixed(2)}`,
      'ms to load 1,000 steps': median(loads),
    });
  }
  printTable(
    `Checkpoint journal: a ~${RESULT_BYTES}-byte tool result per step, a checkpoint per step (bytes and load through agent.execute; cost per save early and late in a ${long}-step session, in turns)`,
    rows,
  );
}
