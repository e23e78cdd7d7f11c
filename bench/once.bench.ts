/**
 * What the intent save costs (issue #34): an agent run of STEPS tool steps, one call each, with a
 * SQLite or file store, its tool declared `'idempotent'` (today: saved after each step) against
 * `'unsafe'` (also saved before the call starts: one more save per step). The difference per step is
 * the intent save's cost. Both stores flush to disk on every save, so the figures depend on the disk.
 * Then the same steps inside a subagent (the root calls it once): a subagent saves nothing of its
 * own, so with `'idempotent'` its steps cost no save, and with `'unsafe'` each costs one save of the
 * root's session, which holds the subagent's whole state so far (its intent).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import {
  AgentState,
  createAgent,
  defineTool,
  ExecutionBudget,
  FileSessionStore,
  type SessionStore,
  SqliteSessionStore,
  scriptedDriver,
  type ToolEffect,
} from '../src/index';
import { collectGarbage, median, now, printTable } from './harness';

const STEPS = 40;
const RUNS = 7;

type Where = 'root' | 'subagent';

async function runOnce(
  store: SessionStore,
  effect: ToolEffect,
  sessionId: string,
  where: Where,
): Promise<number> {
  const act = defineTool({ inputSchema: z.object({ n: z.number() }), effect, execute: ({ n }) => n });
  const script = [
    ...Array.from({ length: STEPS }, (_, i) => ({ toolCalls: [{ name: 'act', args: { n: i } }] })),
    { text: 'done' },
  ];
  const budget = new ExecutionBudget({ maxSteps: STEPS + 3 });
  const agent =
    where === 'root'
      ? createAgent({ driver: scriptedDriver(script), tools: { act }, store, budget })
      : createAgent({
          driver: scriptedDriver([
            { toolCalls: [{ name: 'worker', args: { task: 'go' } }] },
            { text: 'done' },
          ]),
          store,
          budget,
          subagents: {
            agents: {
              worker: { description: 'Works', driver: scriptedDriver(script), tools: { act }, budget },
            },
          },
        });
  const start = now();
  const state = await agent.execute(AgentState.empty().withUserMessage('go'), { sessionId });
  const steps = where === 'root' ? STEPS + 1 : 2;
  if (state.stepCount() !== steps) throw new Error(`expected ${steps} steps, got ${state.stepCount()}`);
  return now() - start;
}

/** Median ms per step of each effect, their runs alternating (so a busy machine weighs on both alike). */
async function perStep(
  store: SessionStore,
  label: string,
  where: Where,
): Promise<{ idempotent: number; unsafe: number }> {
  await runOnce(store, 'idempotent', `${label}-${where}-warmup-i`, where);
  await runOnce(store, 'unsafe', `${label}-${where}-warmup-u`, where);
  const times = { idempotent: [] as number[], unsafe: [] as number[] };
  for (let r = 0; r < RUNS; r++) {
    for (const effect of ['idempotent', 'unsafe'] as const) {
      collectGarbage();
      times[effect].push(await runOnce(store, effect, `${label}-${where}-${effect}-${r}`, where));
    }
  }
  return { idempotent: median(times.idempotent) / (STEPS + 1), unsafe: median(times.unsafe) / (STEPS + 1) };
}

export default async function run(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'agent-machine-bench-once-'));
  try {
    const rows: Record<string, string | number>[] = [];
    const stores: [string, () => SessionStore][] = [
      ['SqliteSessionStore', () => new SqliteSessionStore(join(dir, 'once.db'))],
      ['FileSessionStore', () => new FileSessionStore(join(dir, 'files'))],
    ];
    for (const [name, create] of stores)
      for (const where of ['root', 'subagent'] as const) {
        const store = create();
        const { idempotent, unsafe } = await perStep(store, name, where);
        await store.close();
        rows.push({
          store: name,
          'steps of': where,
          'ms per step, idempotent (today)': idempotent.toFixed(2),
          'ms per step, unsafe (intent save)': unsafe.toFixed(2),
          'ms per intent save': (unsafe - idempotent).toFixed(2),
          ratio: (unsafe / idempotent).toFixed(2),
        });
      }
    printTable(`The intent save: ${STEPS} tool steps, one call each, median of ${RUNS} runs`, rows);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
