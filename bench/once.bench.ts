/**
 * What the intent save costs (issue #34): an agent run of STEPS tool steps, one call each, with a
 * SQLite or file store, its tool declared `'idempotent'` (today: saved after each step) against
 * `'unsafe'` (also saved before the call starts: one more save per step). The difference per step is
 * the intent save's cost. Both stores flush to disk on every save, so the figures depend on the disk.
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

async function runOnce(store: SessionStore, effect: ToolEffect, sessionId: string): Promise<number> {
  const act = defineTool({ inputSchema: z.object({ n: z.number() }), effect, execute: ({ n }) => n });
  const script = [
    ...Array.from({ length: STEPS }, (_, i) => ({ toolCalls: [{ name: 'act', args: { n: i } }] })),
    { text: 'done' },
  ];
  const agent = createAgent({
    driver: scriptedDriver(script),
    tools: { act },
    store,
    budget: new ExecutionBudget({ maxSteps: STEPS + 1 }),
  });
  const start = now();
  const state = await agent.execute(AgentState.empty().withUserMessage('go'), { sessionId });
  if (state.stepCount() !== STEPS + 1)
    throw new Error(`expected ${STEPS + 1} steps, got ${state.stepCount()}`);
  return now() - start;
}

/** Median ms per step of each effect, their runs alternating (so a busy machine weighs on both alike). */
async function perStep(store: SessionStore, label: string): Promise<{ idempotent: number; unsafe: number }> {
  await runOnce(store, 'idempotent', `${label}-warmup-i`);
  await runOnce(store, 'unsafe', `${label}-warmup-u`);
  const times = { idempotent: [] as number[], unsafe: [] as number[] };
  for (let r = 0; r < RUNS; r++) {
    for (const effect of ['idempotent', 'unsafe'] as const) {
      collectGarbage();
      times[effect].push(await runOnce(store, effect, `${label}-${effect}-${r}`));
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
    for (const [name, create] of stores) {
      const store = create();
      const { idempotent, unsafe } = await perStep(store, name);
      await store.close();
      rows.push({
        store: name,
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
