/**
 * At most once through the worker pool: a worker process SIGKILLed during an unsafe call leaves the
 * session waiting with the interrupted call; the job that resumes it on another worker finishes with
 * that waiting state, and a decide job completes the call without running it again.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type AgentClient, createAgentClient, RedisSessionStore } from '../../src/distributed/index';
import { ExecutionStatus } from '../../src/state/execution-status';
import { LEDGER_ANSWER, ledgerState, readLedger } from '../distributed/support/ledger-agent';
import { type RedisServer, startRedisServer } from '../distributed/support/redis-server';
import type { WorkerProcessConfig } from '../distributed/support/worker-process';
import { startWorkerProcess, type WorkerProcess } from '../distributed/support/worker-processes';

let server: RedisServer;
let dir: string;
let client: AgentClient | null = null;
let store: RedisSessionStore | null = null;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  server = await startRedisServer();
  dir = mkdtempSync(join(tmpdir(), 'agent-machine-once-pool-'));
}, 20_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  await client?.close();
  await store?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 20_000);

describe('at most once: a worker killed during an unsafe call', () => {
  it('leaves the session waiting with the interrupted call; a decide job completes it without running it again', async () => {
    const queueName = `once-${randomUUID()}`;
    const storePrefix = `once-${randomUUID()}:`;
    const ledger = join(dir, 'ledger.txt');
    const config = (tag: string, toolDelayMs: number): WorkerProcessConfig => ({
      port: server.port,
      queueName,
      storePrefix,
      ledger,
      tag,
      concurrency: 1,
      modelDelayMs: 5,
      toolDelayMs,
      lockDurationMs: 2_000,
      stalledIntervalMs: 1_000,
      sessionLockTtlMs: 2_000,
      busyRetryDelayMs: 100,
      effect: 'unsafe',
    });
    // the victim's calls write their ledger line, then wait: the kill lands inside the call
    const victim = await startWorkerProcess(config('w1', 60_000));
    workers.push(victim);
    client = await createAgentClient({
      connection: server.connection,
      queueName,
      jobOptions: { attempts: 3, backoff: { type: 'fixed', delay: 100 } },
    });
    const sessionId = 'pay-1';
    const job = await client.execute({ agent: 'ledger', sessionId, state: ledgerState(sessionId) });
    const result = job.finished({ timeoutMs: 60_000 });
    result.catch(() => undefined);
    await vi.waitUntil(() => readLedger(ledger).length === 1, { timeout: 30_000, interval: 5 });
    expect(await victim.kill()).toBe('SIGKILL');
    workers.push(await startWorkerProcess(config('w2', 5)));

    const waiting = await result;
    expect(waiting.workerId).toBe('w2');
    expect(waiting.status).toBe(ExecutionStatus.InProgress);
    expect(waiting.state.pendingApprovals()).toEqual([
      {
        toolCallId: `${sessionId}-call-1`,
        toolName: 'record',
        args: { session: sessionId, n: 1 },
        reason: 'interrupted',
      },
    ]);
    expect(readLedger(ledger).map((l) => l.callId)).toEqual([`${sessionId}-call-1`]);

    const decided = await client.decide({
      agent: 'ledger',
      sessionId,
      decisions: [
        { toolCallId: `${sessionId}-call-1`, type: 'complete', result: 'recorded 1 (by a person)' },
      ],
    });
    const done = await decided.finished({ timeoutMs: 60_000 });
    expect(done.status).toBe(ExecutionStatus.Completed);
    expect(done.state.finalResponse()).toBe(LEDGER_ANSWER);
    // call 1 ran once (on the victim), never again; the later calls once each, on w2
    const calls = readLedger(ledger).map((l) => `${l.worker} ${l.callId}`);
    expect(calls).toEqual([
      `w1 ${sessionId}-call-1`,
      `w2 ${sessionId}-call-2`,
      `w2 ${sessionId}-call-3`,
      `w2 ${sessionId}-call-4`,
    ]);
    expect(done.state.steps()[0]?.toolExecutions()[0]?.value()).toBe('recorded 1 (by a person)');
    store = new RedisSessionStore({ connection: server.connection, prefix: storePrefix });
    expect((await store.load(sessionId))?.state.status()).toBe(ExecutionStatus.Completed);
  }, 120_000);
});
