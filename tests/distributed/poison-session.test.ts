/**
 * A durable session is never failed by worker deaths: a session whose worker dies again and again
 * (more often than BullMQ's old stall count of 1 allowed) is taken over and resumed each time from
 * its checkpoint, as long as it goes on between the deaths. Only a poison session, whose run kills
 * its worker `maxSessionCrashes` times in a row without a new checkpoint, fails: POISON_SESSION,
 * the session still loadable. Worker processes are SIGKILLed by the session's own tool call.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AgentClient,
  AgentJobFailedError,
  createAgentClient,
  RedisSessionStore,
} from '../../src/distributed/index';
import { ExecutionStatus } from '../../src/state/execution-status';
import { LEDGER_ANSWER, LEDGER_STEPS, ledgerState, readLedger } from './support/ledger-agent';
import { type RedisServer, startRedisServer } from './support/redis-server';
import type { WorkerProcessConfig } from './support/worker-process';
import { startWorkerProcess, type WorkerProcess } from './support/worker-processes';

let server: RedisServer;
let dir: string;
const workers: WorkerProcess[] = [];
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  server = await startRedisServer();
  dir = mkdtempSync(join(tmpdir(), 'agent-machine-poison-'));
}, 20_000);

afterAll(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  for (const close of closers.splice(0)) await close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
}, 30_000);

/**
 * Keeps one worker process running (a new one after each death) until `settled` settles; resolves
 * with how many workers died.
 */
async function supervise(config: (tag: string) => WorkerProcessConfig, settled: Promise<unknown>) {
  let done = false;
  void settled.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  let deaths = 0;
  while (!done) {
    const worker = await startWorkerProcess(config(`w${workers.length + 1}`));
    workers.push(worker);
    const ended = await Promise.race([
      worker.exited.then(() => 'died' as const),
      settled.then(
        () => 'settled' as const,
        () => 'settled' as const,
      ),
    ]);
    if (ended === 'died') deaths++;
  }
  return deaths;
}

async function setup(crashCalls: Record<string, number>) {
  const queueName = `poison-${randomUUID()}`;
  const storePrefix = `${queueName}:`;
  const ledger = join(dir, `${queueName}.ledger`);
  const config = (tag: string): WorkerProcessConfig => ({
    port: server.port,
    queueName,
    storePrefix,
    ledger,
    tag,
    concurrency: 2,
    modelDelayMs: 5,
    toolDelayMs: 5,
    // quick take-overs: the test is about how many, not how soon
    lockDurationMs: 1_000,
    stalledIntervalMs: 200,
    sessionLockTtlMs: 600,
    busyRetryDelayMs: 50,
    maxSessionCrashes: 2,
    crashCalls,
  });
  const client: AgentClient = await createAgentClient({ connection: server.connection, queueName });
  closers.push(() => client.close());
  const store = new RedisSessionStore({ connection: server.connection, prefix: storePrefix });
  closers.push(() => store.close());
  return { client, store, ledger, config };
}

describe('worker deaths and poison sessions', () => {
  it('a session whose worker dies three times, each after a new checkpoint, is resumed each time and completes', async () => {
    const id = 'durable';
    const { client, store, ledger, config } = await setup({
      [`${id}-call-2`]: 1,
      [`${id}-call-3`]: 1,
      [`${id}-call-4`]: 1,
    });
    const job = await client.execute({ agent: 'ledger', sessionId: id, state: ledgerState(id) });
    const finished = job.finished({ timeoutMs: 120_000 });
    const deaths = await supervise(config, finished);
    const result = await finished;
    expect(deaths).toBe(3);
    expect(result.status).toBe(ExecutionStatus.Completed);
    expect(result.state.finalResponse()).toBe(LEDGER_ANSWER);
    expect(result.state.stepCount()).toBe(LEDGER_STEPS);
    expect((await store.load(id))?.version).toBe(result.version);
    expect(readLedger(ledger).map((l) => l.callId)).toEqual([
      `${id}-call-1`,
      `${id}-call-2`,
      `${id}-call-2`,
      `${id}-call-3`,
      `${id}-call-3`,
      `${id}-call-4`,
      `${id}-call-4`,
    ]);
  }, 150_000);

  it('a session that kills its worker maxSessionCrashes times in a row fails with POISON_SESSION, and still loads', async () => {
    const id = 'poison';
    const { client, store, ledger, config } = await setup({ [`${id}-call-1`]: 1_000 });
    const job = await client.execute({ agent: 'ledger', sessionId: id, state: ledgerState(id) });
    const finished = job.finished({ timeoutMs: 120_000 });
    finished.catch(() => undefined);
    const deaths = await supervise(config, finished);
    const error = await finished.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentJobFailedError);
    expect(error).toMatchObject({
      errorName: 'PoisonSessionError',
      errorCode: 'POISON_SESSION',
      sessionId: id,
    });
    expect(deaths).toBe(2);
    expect(readLedger(ledger).map((l) => l.callId)).toEqual([`${id}-call-1`, `${id}-call-1`]);
    const stored = await store.load(id);
    expect(stored?.state.status()).toBe('in_progress');
    expect(stored?.state.stepCount()).toBe(0);
  }, 150_000);
});
