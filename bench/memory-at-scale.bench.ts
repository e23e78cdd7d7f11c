/**
 * Sessions waiting for approval at scale (issue 50, item 5): SESSIONS sessions (default 10,000) in
 * one process, each run until its one tool call (`pay`, `needsApproval`) waits for a person, the
 * run's actor released and the state in the store only (`InMemorySessionStore`, and a
 * `SqliteSessionStore` file). Measured with GC settled before and after (`npm run bench` exposes
 * it): resident memory (RSS) and heap (heapUsed) grown per waiting session, then the time to
 * decide all of them (`agent.decide(sessionId, [approve])`, DECIDE_CONCURRENCY at once: the call
 * runs and the run answers) in sessions per second, and the memory left when all are decided.
 *
 * `SESSIONS` (default 10,000), `DECIDE_CONCURRENCY` (default 100), `SQLITE_DURABILITY` (default
 * `'process'`, so that 10,000 sessions x 3 saves each stay quick on a shared disk; `full` flushes
 * every save, as a server would).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { AgentState, createAgent, defineTool, ExecutionBudget, scriptedDriver } from '../src/index';
import {
  type Durability,
  InMemorySessionStore,
  type SessionStore,
  SqliteSessionStore,
} from '../src/persistence/index';
import { collectGarbage, now, printTable } from './harness';

const SESSIONS = Number(process.env.SESSIONS ?? 10_000);
const CONCURRENCY = Number(process.env.DECIDE_CONCURRENCY ?? 100);
const DURABILITY = (process.env.SQLITE_DURABILITY ?? 'process') as Durability;

const pay = defineTool({
  description: 'Pay an amount',
  inputSchema: z.object({ amount: z.number() }),
  needsApproval: true,
  execute: async ({ amount }) => `paid ${amount}`,
});

function payingAgent(store: SessionStore) {
  return createAgent({
    driver: scriptedDriver([
      (state) =>
        state.stepCount() === 0
          ? { text: 'paying', toolCalls: [{ name: 'pay', args: { amount: 5 }, id: 'pay-1' }] }
          : { text: 'paid' },
    ]),
    tools: { pay },
    store,
    budget: ExecutionBudget.unlimited(),
  });
}

async function settled(): Promise<{ rss: number; heap: number }> {
  for (let i = 0; i < 3; i++) {
    collectGarbage();
    await new Promise((resolve) => setImmediate(resolve));
  }
  const { rss, heapUsed } = process.memoryUsage();
  return { rss, heap: heapUsed };
}

/** Runs `work(i)` for i in [0, count), `concurrency` at a time. */
async function pool(count: number, concurrency: number, work: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await work(next++);
    }),
  );
}

async function measureStore(label: string, store: SessionStore): Promise<Record<string, string | number>> {
  const agent = payingAgent(store);
  // warm-up: one session through both halves, so no first-call compilation is billed to the sessions
  await agent.execute(AgentState.empty().withUserMessage('pay'), { sessionId: 'warm' });
  await agent.decide('warm', [{ toolCallId: 'pay-1', type: 'approve' }]);
  const before = await settled();
  const startWaiting = now();
  await pool(SESSIONS, CONCURRENCY, async (i) => {
    const state = await agent.execute(AgentState.empty().withUserMessage('pay'), { sessionId: `s${i}` });
    if (state.pendingApprovals().length !== 1) throw new Error(`${label}: session s${i} is not waiting`);
  });
  const waitingMs = now() - startWaiting;
  const waiting = await settled();
  const startDeciding = now();
  await pool(SESSIONS, CONCURRENCY, async (i) => {
    const state = await agent.decide(`s${i}`, [{ toolCallId: 'pay-1', type: 'approve' }]);
    if (state.finalResponse() !== 'paid') throw new Error(`${label}: session s${i} did not finish`);
  });
  const decideMs = now() - startDeciding;
  const decided = await settled();
  const kib = (bytes: number) => bytes / 1024 / SESSIONS;
  return {
    store: label,
    sessions: SESSIONS,
    'RSS KiB/waiting': kib(waiting.rss - before.rss),
    'heap KiB/waiting': kib(waiting.heap - before.heap),
    'to waiting, sessions/s': (SESSIONS * 1000) / waitingMs,
    'decide all, s': decideMs / 1000,
    'decided, sessions/s': (SESSIONS * 1000) / decideMs,
    'heap KiB/decided': kib(decided.heap - before.heap),
  };
}

export default async function run(): Promise<void> {
  const rows: Record<string, string | number>[] = [];
  rows.push(await measureStore('InMemorySessionStore', new InMemorySessionStore()));
  const dir = mkdtempSync(join(tmpdir(), 'memory-at-scale-'));
  const sqlite = new SqliteSessionStore(join(dir, 'sessions.db'), { durability: DURABILITY });
  try {
    rows.push(await measureStore(`SqliteSessionStore ('${DURABILITY}')`, sqlite));
  } finally {
    await sqlite.close();
    rmSync(dir, { recursive: true, force: true });
  }
  printTable(
    `${SESSIONS.toLocaleString('en')} sessions waiting for approval in one process (actors released, state in ` +
      `the store; GC settled): memory grown per waiting session, then every one approved, ${CONCURRENCY} at once`,
    rows,
  );
}
