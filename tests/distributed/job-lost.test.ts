/**
 * A job Redis loses (a restart without persistence: here the data is flushed) makes
 * `job.finished()` reject with AgentJobLostError (JOB_LOST) within seconds, not at the caller's
 * timeout; a job removed as it completes (`removeOnComplete: true`) is not taken for lost.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  AgentJobLostError,
  createAgentClient,
  createAgentWorker,
  RedisSessionStore,
} from '../../src/distributed/index';
import { ledgerAgent, ledgerState } from './support/ledger-agent';
import { type RedisServer, startRedisServer } from './support/redis-server';

let server: RedisServer;
const closers: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  server = await startRedisServer();
}, 20_000);

afterAll(async () => {
  for (const close of closers.splice(0).reverse()) await close();
  await server?.stop();
});

describe('JOB_LOST', () => {
  it('job.finished() rejects with JOB_LOST when Redis loses the job, long before its timeout', async () => {
    const queueName = `lost-${randomUUID()}`;
    const client = await createAgentClient({ connection: server.connection, queueName });
    closers.push(() => client.close());
    // no worker: the job waits in the queue, and then Redis loses everything
    const job = await client.execute({ agent: 'ledger', sessionId: 'gone', state: ledgerState('gone') });
    const finished = job.finished({ timeoutMs: 600_000 });
    finished.catch(() => undefined);
    const raw = new Redis(server.connection);
    try {
      await raw.flushall();
    } finally {
      await raw.quit();
    }
    const error = await finished.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AgentJobLostError);
    expect(error).toMatchObject({ code: 'JOB_LOST', jobId: job.id, sessionId: 'gone' });
  }, 60_000);

  it('a job removed as it completes (removeOnComplete: true) resolves, not JOB_LOST', async () => {
    const queueName = `kept-${randomUUID()}`;
    const store = new RedisSessionStore({ connection: server.connection, prefix: `${queueName}:` });
    closers.push(() => store.close());
    const client = await createAgentClient({
      connection: server.connection,
      queueName,
      jobOptions: { removeOnComplete: true },
    });
    closers.push(() => client.close());
    const worker = await createAgentWorker({
      agents: { ledger: () => ledgerAgent({ ledger: '/dev/null', workerTag: 'w', modelDelayMs: 1_000 }) },
      store,
      connection: server.connection,
      queueName,
    });
    closers.push(() => worker.close());
    // its five steps take some 5 s: the job is looked up while it runs and after it is removed
    const job = await client.execute({ agent: 'ledger', sessionId: 'kept', state: ledgerState('kept') });
    const result = await job.finished({ timeoutMs: 60_000 });
    expect(result.status).toBe('completed');
  }, 90_000);
});
