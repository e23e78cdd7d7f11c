import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type AgentClient,
  type AgentJobResult,
  createAgentClient,
  RedisSessionStore,
} from '../../src/distributed/index';
import { ExecutionStatus } from '../../src/state/execution-status';
import {
  LEDGER_ANSWER,
  LEDGER_STEPS,
  LEDGER_TOOL_STEPS,
  type LedgerLine,
  ledgerState,
  readLedger,
} from './support/ledger-agent';
import { type RedisServer, startRedisServer } from './support/redis-server';
import type { WorkerProcessConfig } from './support/worker-process';
import { startWorkerProcess, type WorkerProcess } from './support/worker-processes';

const SESSIONS = 50;
const CONCURRENCY = 4;
const VICTIM = 'w1';

let server: RedisServer;
let dir: string;
let client: AgentClient | null = null;
let store: RedisSessionStore | null = null;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  server = await startRedisServer();
  dir = mkdtempSync(join(tmpdir(), 'agent-machine-pool-'));
}, 20_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  await client?.close();
  await store?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 20_000);

describe('a pool of three worker processes, one of them SIGKILLed mid-run', () => {
  it('completes every session, each tool call once (but the calls in flight at the kill), final states in Redis', async () => {
    const queueName = `pool-${randomUUID()}`;
    const storePrefix = `pool-${randomUUID()}:`;
    const ledger = join(dir, 'ledger.txt');
    const config = (tag: string): WorkerProcessConfig => ({
      port: server.port,
      queueName,
      storePrefix,
      ledger,
      tag,
      concurrency: CONCURRENCY,
      modelDelayMs: 15,
      toolDelayMs: 15,
      // The timing options are left out: the take-over under test is the defaults'.
    });
    workers.push(...(await Promise.all(['w1', 'w2', 'w3'].map((tag) => startWorkerProcess(config(tag))))));
    const victim = workers.find((w) => w.tag === VICTIM) as WorkerProcess;

    client = await createAgentClient({
      connection: server.connection,
      queueName,
      jobOptions: { attempts: 3, backoff: { type: 'fixed', delay: 100 } },
    });
    const sessionIds = Array.from({ length: SESSIONS }, (_, i) => `s-${String(i).padStart(2, '0')}`);
    const jobs = await Promise.all(
      sessionIds.map((sessionId) =>
        (client as AgentClient).execute({ agent: 'ledger', sessionId, state: ledgerState(sessionId) }),
      ),
    );
    // A safety net only: with the defaults a dead worker's sessions resume within about 10 s.
    const results = Promise.all(jobs.map((job) => job.finished({ timeoutMs: 120_000 })));
    // Not left unhandled if the test fails before it awaits them.
    results.catch(() => undefined);

    // Kill the victim in the middle of a session (some of its calls done, not all), once it has
    // checkpointed a few steps, so that the resumed runs have completed steps not to repeat.
    let partial: string | null = null;
    await vi.waitUntil(
      () => {
        const byVictim = readLedger(ledger).filter((l) => l.worker === VICTIM);
        if (byVictim.length < 2 * CONCURRENCY) return false;
        partial = [...countBy(byVictim)].find(([, n]) => n >= 2 && n < LEDGER_TOOL_STEPS)?.[0] ?? null;
        return partial !== null;
      },
      { timeout: 20_000, interval: 5 },
    );
    expect(await victim.kill()).toBe('SIGKILL');
    const victimLinesAtKill = readLedger(ledger).filter((l) => l.worker === VICTIM);

    const finished: AgentJobResult[] = await results;

    // Every session completed, with all its steps, on one of the workers.
    for (const [i, result] of finished.entries()) {
      const sessionId = sessionIds[i] as string;
      expect(result.sessionId).toBe(sessionId);
      expect(result.status).toBe(ExecutionStatus.Completed);
      expect(result.state.finalResponse()).toBe(LEDGER_ANSWER);
      expect(result.state.stepCount()).toBe(LEDGER_STEPS);
      expect(result.state.executionCount()).toBe(1);
      // Each step recorded once, in order: no step of a resumed run was recorded twice.
      expect(result.state.steps().flatMap((s) => s.toolExecutions().map((t) => t.toolCall().id))).toEqual(
        expectedCalls(sessionId),
      );
    }

    // The ledger: each call executed exactly once, except a call in flight on the victim at the
    // kill, which ran again when its step was resumed elsewhere (at most one per session, and at
    // most one per job the victim was running).
    const lines = readLedger(ledger);
    const inFlightAtKill: LedgerLine[] = [];
    for (const sessionId of sessionIds) {
      const mine = lines.filter((l) => l.session === sessionId);
      expect(new Set(mine.map((l) => l.callId))).toEqual(new Set(expectedCalls(sessionId)));
      for (const callId of expectedCalls(sessionId)) {
        const runs = mine.filter((l) => l.callId === callId);
        expect(runs.length, `${callId}: ${JSON.stringify(runs)}`).toBeLessThanOrEqual(2);
        if (runs.length === 2) {
          expect(runs[0]?.worker).toBe(VICTIM);
          expect(runs[1]?.worker).not.toBe(VICTIM);
          // It was the victim's last call of the session before it died.
          expect(victimLinesAtKill.filter((l) => l.session === sessionId).at(-1)?.callId).toBe(callId);
          inFlightAtKill.push(runs[0] as LedgerLine);
        }
      }
      expect(mine.length).toBe(
        LEDGER_TOOL_STEPS + inFlightAtKill.filter((l) => l.session === sessionId).length,
      );
    }
    expect(inFlightAtKill.length).toBeLessThanOrEqual(CONCURRENCY);
    console.log(
      `[worker-pool] ${SESSIONS} sessions, ${lines.length} tool calls; killed ${VICTIM} mid-session ${partial}; ` +
        `tool calls in flight at the kill, executed again on resume: ${
          inFlightAtKill.map((l) => l.callId).join(', ') || 'none'
        }`,
    );

    // The sessions the victim had started were finished by the other workers, from its checkpoints.
    const victimSessions = new Set(victimLinesAtKill.map((l) => l.session));
    const takenOver = finished.filter((r) => victimSessions.has(r.sessionId) && r.workerId !== VICTIM);
    expect(takenOver.map((r) => r.sessionId)).toContain(partial);
    for (const result of finished) expect(['w1', 'w2', 'w3']).toContain(result.workerId);

    // The store holds every final state, at the version the job reported.
    store = new RedisSessionStore({ connection: server.connection, prefix: storePrefix });
    expect(await store.list()).toEqual(sessionIds);
    for (const result of finished) {
      const stored = await store.load(result.sessionId);
      expect(stored?.version).toBe(result.version);
      expect(stored?.state.toJSON()).toEqual(result.state.toJSON());
    }
  }, 180_000);
});

function expectedCalls(sessionId: string): string[] {
  return Array.from({ length: LEDGER_TOOL_STEPS }, (_, i) => `${sessionId}-call-${i + 1}`);
}

function countBy(lines: LedgerLine[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const line of lines) counts.set(line.session, (counts.get(line.session) ?? 0) + 1);
  return counts;
}
