import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type AgentClient, createAgentClient } from '../../src/distributed/agent-client';
import { SessionLockLostError } from '../../src/distributed/errors';
import { hashTag } from '../../src/distributed/redis-keys';
import { RedisSessionStore } from '../../src/distributed/redis-session-store';
import { RunStore } from '../../src/distributed/run-store';
import {
  DEFAULT_SESSION_LOCK_PREFIX,
  type SessionLock,
  SessionLocks,
} from '../../src/distributed/session-lock';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import { ExecutionStatus } from '../../src/state/execution-status';
import { LEDGER_ANSWER, LEDGER_TOOL_STEPS, ledgerState, readLedger } from './support/ledger-agent';
import { type RedisServer, startRedisServer } from './support/redis-server';
import type { WorkerProcessConfig } from './support/worker-process';
import { startWorkerProcess, type WorkerProcess } from './support/worker-processes';

let server: RedisServer;
let dir: string;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  server = await startRedisServer();
  dir = mkdtempSync(join(tmpdir(), 'agent-machine-fencing-'));
}, 20_000);

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

/** Whether the process is stopped (SIGSTOP): its state in /proc is 'T'. */
function stopped(pid: number): boolean {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).startsWith('T');
}

describe('a worker paused past its session lock while another takes its job over (SIGSTOP / SIGCONT)', () => {
  it('can neither checkpoint nor start its unsafe call once it goes on (SESSION_LOCK_LOST); nothing runs twice', async () => {
    const queueName = `fence-${randomUUID()}`;
    const storePrefix = `${queueName}:`;
    const ledger = join(dir, `${queueName}.ledger`);
    const sessionId = 's-fence';
    const config = (tag: string, extra: Partial<WorkerProcessConfig>): WorkerProcessConfig => ({
      port: server.port,
      queueName,
      storePrefix,
      ledger,
      tag,
      concurrency: 1,
      modelDelayMs: 0,
      toolDelayMs: 0,
      effect: 'unsafe',
      sessionLockTtlMs: 900,
      lockDurationMs: 1_200,
      stalledIntervalMs: 300,
      busyRetryDelayMs: 100,
      ...extra,
    });
    // A stops itself as its second step's model call answers: the step's intent (record, unsafe)
    // is the next thing it saves once it goes on.
    const stale: WorkerProcess = await startWorkerProcess(config('wA', { selfStopAtStep: 2 }));
    cleanups.push(async () => {
      stale.child.kill('SIGCONT');
      await stale.kill();
    });
    const client: AgentClient = await createAgentClient({
      connection: server.connection,
      queueName,
      jobOptions: { attempts: 3, backoff: { type: 'fixed', delay: 100 } },
    });
    cleanups.push(() => client.close());
    const job = await client.execute({ agent: 'ledger', sessionId, state: ledgerState(sessionId) });
    const finished = job.finished({ timeoutMs: 60_000 });
    finished.catch(() => undefined);

    await vi.waitUntil(() => stale.child.pid !== undefined && stopped(stale.child.pid), {
      timeout: 30_000,
      interval: 20,
    });
    expect(readLedger(ledger).map((l) => `${l.worker} ${l.callId}`)).toEqual([`wA ${sessionId}-call-1`]);

    // B takes the stalled job over; its model calls are slow, so it holds the lock and has saved
    // nothing yet when A goes on: the session's version is still the one A read.
    const taker: WorkerProcess = await startWorkerProcess(config('wB', { modelDelayMs: 1_500 }));
    cleanups.push(() => taker.kill());
    const redis = new Redis(server.connection);
    cleanups.push(() => redis.quit());
    const lockKey = `${DEFAULT_SESSION_LOCK_PREFIX}{${hashTag(sessionId)}}`;
    await vi.waitUntil(async () => (await redis.get(lockKey))?.startsWith('wB/') ?? false, {
      timeout: 30_000,
      interval: 20,
    });
    const store = new RedisSessionStore({ connection: server.connection, prefix: storePrefix });
    cleanups.push(() => store.close());
    const versionAtTakeOver = (await store.load(sessionId))?.version;

    stale.child.kill('SIGCONT');
    const result = await finished;
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.state.finalResponse()).toBe(LEDGER_ANSWER);
    expect(result.workerId).toBe('wB');
    // each call ran once: A's unsafe call of step 2 never started, B ran it and the rest
    const lines = readLedger(ledger).map((l) => `${l.worker} ${l.callId}`);
    expect(lines).toEqual([
      `wA ${sessionId}-call-1`,
      ...Array.from({ length: LEDGER_TOOL_STEPS - 1 }, (_, i) => `wB ${sessionId}-call-${i + 2}`),
    ]);
    // A went on and tried: its step's intent save was refused (SESSION_LOCK_LOST), so it wrote no
    // checkpoint: every checkpoint after the take-over is B's, one per step it ran
    expect(stale.output()).toContain('save refused SESSION_LOCK_LOST');
    expect((await store.checkpoints(sessionId)).length).toBeGreaterThan(versionAtTakeOver ?? 0);
  }, 90_000);
});

describe('a worker killed inside an unsafe call whose tool reconciles', () => {
  it('the worker that takes the job over settles the call with the reconcile: no person asked, not run again', async () => {
    const queueName = `reconcile-${randomUUID()}`;
    const ledger = join(dir, `${queueName}.ledger`);
    const sessionId = 's-reconcile';
    const config = (tag: string, extra: Partial<WorkerProcessConfig>): WorkerProcessConfig => ({
      port: server.port,
      queueName,
      storePrefix: `${queueName}:`,
      ledger,
      tag,
      concurrency: 1,
      modelDelayMs: 0,
      toolDelayMs: 0,
      reconcile: true,
      sessionLockTtlMs: 900,
      lockDurationMs: 1_200,
      stalledIntervalMs: 300,
      busyRetryDelayMs: 100,
      ...extra,
    });
    // A's record calls write their line, then wait a minute: it is killed inside the first
    const victim = await startWorkerProcess(config('wA', { toolDelayMs: 60_000 }));
    cleanups.push(() => victim.kill());
    const client: AgentClient = await createAgentClient({
      connection: server.connection,
      queueName,
      jobOptions: { attempts: 3, backoff: { type: 'fixed', delay: 100 } },
    });
    cleanups.push(() => client.close());
    const job = await client.execute({ agent: 'ledger', sessionId, state: ledgerState(sessionId) });
    const finished = job.finished({ timeoutMs: 60_000 });
    finished.catch(() => undefined);
    await vi.waitUntil(() => readLedger(ledger).length === 1, { timeout: 30_000, interval: 20 });
    expect(await victim.kill()).toBe('SIGKILL');
    const taker = await startWorkerProcess(config('wB', {}));
    cleanups.push(() => taker.kill());

    const result = await finished;
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.state.pendingApprovals()).toEqual([]);
    const first = result.state.steps()[0]?.toolExecutions()[0];
    expect(first?.resolution()).toBe('reconciled');
    expect(first?.value()).toBe('recorded 1');
    expect(readLedger(ledger).map((l) => `${l.worker} ${l.callId}`)).toEqual([
      `wA ${sessionId}-call-1`,
      ...Array.from({ length: LEDGER_TOOL_STEPS - 1 }, (_, i) => `wB ${sessionId}-call-${i + 2}`),
    ]);
  }, 90_000);
});

describe('RedisSessionStore.fencedSave', () => {
  it('writes only while the lock holds its token, else SESSION_LOCK_LOST and nothing written', async () => {
    const store = new RedisSessionStore({ connection: server.connection, prefix: `fenced-${randomUUID()}:` });
    cleanups.push(() => store.close());
    const redis = new Redis(server.connection);
    cleanups.push(() => redis.quit());
    await redis.set('lock:s-1', 'mine');
    const state = ledgerState('s-1');
    const fence = { key: 'lock:s-1', token: 'mine' };
    expect(await store.fencedSave('s-1', state, null, fence)).toBe(1);
    await redis.set('lock:s-1', 'theirs');
    const refused = store.fencedSave('s-1', state, 1, fence);
    await expect(refused).rejects.toBeInstanceOf(SessionLockLostError);
    await expect(refused).rejects.toMatchObject({ code: 'SESSION_LOCK_LOST' });
    await redis.del('lock:s-1');
    await expect(store.fencedSave('s-1', state, 1, fence)).rejects.toMatchObject({
      code: 'SESSION_LOCK_LOST',
    });
    expect((await store.load('s-1'))?.version).toBe(1);
    // a save with no fence is as before
    expect(await store.save('s-1', state, 1)).toBe(2);
  });
});

describe('RedisSessionStore.fencedSave after a take-over', () => {
  it('refuses the stale holder as SESSION_LOCK_LOST even when the new holder has saved since (not SESSION_CONFLICT)', async () => {
    const store = new RedisSessionStore({ connection: server.connection, prefix: `fenced-${randomUUID()}:` });
    cleanups.push(() => store.close());
    const redis = new Redis(server.connection);
    cleanups.push(() => redis.quit());
    await redis.set('lock:s-2', 'mine');
    const state = ledgerState('s-2');
    const fence = { key: 'lock:s-2', token: 'mine' };
    expect(await store.fencedSave('s-2', state, null, fence)).toBe(1);
    // another worker takes the lock over and saves first
    await redis.set('lock:s-2', 'theirs');
    expect(await store.fencedSave('s-2', state, 1, { key: 'lock:s-2', token: 'theirs' })).toBe(2);
    // the stale holder goes on from the version it read
    await expect(store.fencedSave('s-2', state, 1, fence)).rejects.toMatchObject({
      code: 'SESSION_LOCK_LOST',
    });
    expect((await store.load('s-2'))?.version).toBe(2);
  });
});

describe('a worker run on a store without a fenced save (the lock checked around each save)', () => {
  it('halts at the first save once the lock is gone, writing nothing', async () => {
    const redis = new Redis(server.connection);
    cleanups.push(() => redis.quit());
    const locks = new SessionLocks(redis, { prefix: `lock-${randomUUID()}:` });
    const lock = (await locks.acquire('s-1', 'w1')) as SessionLock;
    cleanups.push(() => lock.release());
    const inner = new InMemorySessionStore();
    const run = new RunStore(inner, lock);
    expect(await run.save('s-1', ledgerState('s-1'), null)).toBe(1);
    // another holder takes the session (this one was paused past its TTL)
    await redis.set(lock.key, 'w2/other');
    const saving = run.save('s-1', ledgerState('s-1'), 1);
    expect(await run.halted).toMatchObject({ kind: 'lock-lost', error: { code: 'SESSION_LOCK_LOST' } });
    expect(await Promise.race([saving, Promise.resolve('frozen')])).toBe('frozen');
    expect((await inner.load('s-1'))?.version).toBe(1);
  });
});
