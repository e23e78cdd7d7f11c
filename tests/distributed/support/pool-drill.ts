/**
 * The worker pool's drills (`npm run matrix:pool`, a small sample in tests/distributed/pool-drill.test.ts):
 *
 * - the kill drill: N ledger sessions (5 steps each) over worker processes on one redis-server, M
 *   SIGKILLs of busy workers at seeded random moments, a new worker started for each; every session
 *   must complete;
 * - the Redis-restart drill: redis-server SIGKILLed and started again mid-run, without persistence
 *   or with an append-only file (fsync every second or every write); each job is counted as
 *   completed (and whether before the restart), lost (`JOB_LOST`, with how long after the restart
 *   `job.finished()` rejected), failed otherwise, or timed out.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AgentJobLostError,
  type AgentJobResult,
  AgentJobTimeoutError,
  createAgentClient,
} from '../../../src/distributed/index';
import { seeded } from '../../once/support/once-matrix';
import { LEDGER_ANSWER, LEDGER_STEPS, ledgerState, readLedger } from './ledger-agent';
import { startRedisServer } from './redis-server';
import { type RedisPersistence, startRestartableRedis } from './restartable-redis';
import type { WorkerProcessConfig } from './worker-process';
import { startWorkerProcess, type WorkerProcess } from './worker-processes';

export interface KillDrillOptions {
  readonly sessions: number;
  readonly kills: number;
  readonly seed: number;
  /** Worker processes running at a time (default 4), each `concurrency` jobs (default 4). */
  readonly workers?: number;
  readonly concurrency?: number;
  /** Delay of each model call and of each tool call (default 200 ms each: a session lasts ~2 s). */
  readonly stepDelayMs?: number;
  /** The longest seeded pause between two kills (default 1,000 ms). */
  readonly maxKillGapMs?: number;
  /** A safety net per job (default 300 s). */
  readonly timeoutMs?: number;
  readonly log?: (line: string) => void;
}

export interface KillDrillResult {
  readonly sessions: number;
  readonly complete: number;
  readonly kills: number;
  /** Sessions not complete, by what their job ended with. */
  readonly failures: Readonly<Record<string, number>>;
  readonly seconds: number;
}

/** Runs the kill drill on a redis-server of its own (default timings of the workers). */
export async function runKillDrill(options: KillDrillOptions): Promise<KillDrillResult> {
  const log = options.log ?? (() => undefined);
  const random = seeded(options.seed);
  const concurrency = options.concurrency ?? 4;
  const delay = options.stepDelayMs ?? 200;
  const maxGap = options.maxKillGapMs ?? 1_000;
  const server = await startRedisServer();
  const dir = mkdtempSync(join(tmpdir(), 'agent-machine-drill-'));
  const ledger = join(dir, 'ledger.txt');
  const queueName = `drill-${randomUUID()}`;
  const config = (tag: string): WorkerProcessConfig => ({
    port: server.port,
    queueName,
    storePrefix: `${queueName}:`,
    ledger,
    tag,
    concurrency,
    modelDelayMs: delay,
    toolDelayMs: delay,
  });
  const live: WorkerProcess[] = [];
  const all: WorkerProcess[] = [];
  const starting: Promise<unknown>[] = [];
  const startWorker = async (tag: string) => {
    // a loaded machine may take long to start one
    const worker = await startWorkerProcess(config(tag), 180_000);
    all.push(worker);
    live.push(worker);
  };
  const client = await createAgentClient({ connection: server.connection, queueName });
  const began = Date.now();
  try {
    await Promise.all(Array.from({ length: options.workers ?? 4 }, (_, i) => startWorker(`w${i + 1}`)));
    const jobs = await Promise.all(
      Array.from({ length: options.sessions }, (_, i) => {
        const sessionId = `drill-${i}`;
        return client.execute({ agent: 'ledger', sessionId, state: ledgerState(sessionId) });
      }),
    );
    let settled = 0;
    const outcomes = Promise.allSettled(
      jobs.map((job) =>
        job.finished({ timeoutMs: options.timeoutMs ?? 300_000 }).finally(() => {
          settled++;
        }),
      ),
    );
    let kills = 0;
    while (kills < options.kills && settled < jobs.length) {
      await sleep(random() * maxGap);
      // a busy worker: one that has recorded a tool call since it started
      const busy = () => {
        const tags = new Set(readLedger(ledger).map((l) => l.worker));
        return live.filter((w) => tags.has(w.tag));
      };
      // One worker dies at a time, as in a pool that goes on: a kill waits for two live workers.
      // (Killing each replacement as soon as it is busy, before the sessions it took over checkpoint
      // again, makes three deaths in a row of those sessions: POISON_SESSION, by design.)
      while ((busy().length === 0 || live.length < 2) && settled < jobs.length) await sleep(20);
      const candidates = busy();
      if (candidates.length === 0) break;
      const victim = candidates[Math.floor(random() * candidates.length)] as WorkerProcess;
      live.splice(live.indexOf(victim), 1);
      await victim.kill();
      kills++;
      log(`kill ${kills}: ${victim.tag} at ${((Date.now() - began) / 1000).toFixed(1)} s`);
      const replacement = startWorker(`r${kills}`);
      // awaited below; meanwhile its failure is not an unhandled rejection
      replacement.catch(() => undefined);
      starting.push(replacement);
    }
    const results = await outcomes;
    await Promise.all(starting);
    const failures: Record<string, number> = {};
    let complete = 0;
    for (const outcome of results) {
      if (outcome.status === 'fulfilled' && isComplete(outcome.value)) complete++;
      else {
        const why =
          outcome.status === 'fulfilled'
            ? `${outcome.value.status}, ${outcome.value.state.stepCount()} steps`
            : String((outcome.reason as Error)?.message ?? outcome.reason).slice(0, 160);
        failures[why] = (failures[why] ?? 0) + 1;
      }
    }
    return { sessions: jobs.length, complete, kills, failures, seconds: (Date.now() - began) / 1000 };
  } finally {
    await Promise.all(all.map((w) => w.kill()));
    await client.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

export interface RestartDrillOptions {
  readonly persistence: RedisPersistence;
  readonly sessions: number;
  /** Worker processes (default 2), each `concurrency` jobs (default 4). */
  readonly workers?: number;
  readonly concurrency?: number;
  /** Delay of each model call and of each tool call (default 100 ms each). */
  readonly stepDelayMs?: number;
  /** Redis restarts once this many tool calls are recorded (default a third of the sessions' calls). */
  readonly restartAfterCalls?: number;
  /** A safety net per job (default 120 s). */
  readonly timeoutMs?: number;
}

export interface RestartDrillResult {
  readonly persistence: RedisPersistence;
  readonly sessions: number;
  /** Completed before the restart / after it. */
  readonly completedBefore: number;
  readonly completedAfter: number;
  /** Rejected with JOB_LOST, and the longest time from the restart to such a rejection. */
  readonly lost: number;
  readonly longestLostWaitMs: number | null;
  /** Timed out (the caller's timeout), and failed otherwise (by reason). */
  readonly timedOut: number;
  readonly failures: Readonly<Record<string, number>>;
}

/** Runs the Redis-restart drill on a redis-server of its own with the given persistence. */
export async function runRestartDrill(options: RestartDrillOptions): Promise<RestartDrillResult> {
  const concurrency = options.concurrency ?? 4;
  const delay = options.stepDelayMs ?? 100;
  const server = await startRestartableRedis(options.persistence);
  const dir = mkdtempSync(join(tmpdir(), 'agent-machine-restart-drill-'));
  const ledger = join(dir, 'ledger.txt');
  const queueName = `restart-${randomUUID()}`;
  const workers: WorkerProcess[] = [];
  const client = await createAgentClient({ connection: server.connection, queueName, onError: () => {} });
  try {
    for (let i = 0; i < (options.workers ?? 2); i++)
      workers.push(
        // a loaded machine may take long to start one
        await startWorkerProcess(
          {
            port: server.port,
            queueName,
            storePrefix: `${queueName}:`,
            ledger,
            tag: `w${i + 1}`,
            concurrency,
            modelDelayMs: delay,
            toolDelayMs: delay,
          },
          180_000,
        ),
      );
    const jobs = await Promise.all(
      Array.from({ length: options.sessions }, (_, i) => {
        const sessionId = `restart-${i}`;
        return client.execute({ agent: 'ledger', sessionId, state: ledgerState(sessionId) });
      }),
    );
    let restartedAt: number | null = null;
    const timeoutMs = options.timeoutMs ?? 120_000;
    const outcomes = Promise.all(
      jobs.map(async (job) => {
        try {
          const result = await job.finished({ timeoutMs });
          return { kind: 'completed' as const, result, before: restartedAt === null };
        } catch (error) {
          return { kind: 'error' as const, error, at: Date.now() };
        }
      }),
    );
    const threshold = options.restartAfterCalls ?? Math.ceil((options.sessions * (LEDGER_STEPS - 1)) / 3);
    while (readLedger(ledger).length < threshold) await sleep(20);
    await server.crashAndRestart();
    restartedAt = Date.now();
    const results = await outcomes;
    let completedBefore = 0;
    let completedAfter = 0;
    let lost = 0;
    let longestLostWaitMs: number | null = null;
    let timedOut = 0;
    const failures: Record<string, number> = {};
    for (const outcome of results) {
      if (outcome.kind === 'completed') {
        if (!isComplete(outcome.result)) {
          const why = `${outcome.result.status}, ${outcome.result.state.stepCount()} steps`;
          failures[why] = (failures[why] ?? 0) + 1;
        } else if (outcome.before) completedBefore++;
        else completedAfter++;
      } else if (outcome.error instanceof AgentJobLostError) {
        lost++;
        const waited = outcome.at - (restartedAt as number);
        longestLostWaitMs = Math.max(longestLostWaitMs ?? 0, waited);
      } else if (outcome.error instanceof AgentJobTimeoutError) timedOut++;
      else {
        const why = String((outcome.error as Error)?.message ?? outcome.error).slice(0, 160);
        failures[why] = (failures[why] ?? 0) + 1;
      }
    }
    return {
      persistence: options.persistence,
      sessions: jobs.length,
      completedBefore,
      completedAfter,
      lost,
      longestLostWaitMs,
      timedOut,
      failures,
    };
  } finally {
    await Promise.all(workers.map((w) => w.kill()));
    await client.close();
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

function isComplete(result: AgentJobResult): boolean {
  return (
    result.status === 'completed' &&
    result.state.stepCount() === LEDGER_STEPS &&
    result.state.finalResponse() === LEDGER_ANSWER
  );
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
