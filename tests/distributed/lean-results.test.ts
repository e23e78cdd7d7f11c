/**
 * Lean job results: a client given the workers' store (`createAgentClient({ store })`) enqueues
 * jobs whose BullMQ result holds no copy of the final state; `job.finished()` still gives
 * `{ state, workerId, version }`, the state read from the store at the version the job reports.
 */
import { randomUUID } from 'node:crypto';
import { Job, Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentClient, createAgentWorker, RedisSessionStore } from '../../src/distributed/index';
import { LEDGER_ANSWER, ledgerAgent, ledgerState } from './support/ledger-agent';
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

describe('lean job results', () => {
  it('a client with the store: no state in the BullMQ result, finished() reads it from the store', async () => {
    const queueName = `lean-${randomUUID()}`;
    const store = new RedisSessionStore({ connection: server.connection, prefix: `${queueName}:` });
    closers.push(() => store.close());
    const worker = await createAgentWorker({
      agents: { ledger: () => ledgerAgent({ ledger: '/dev/null', workerTag: 'w' }) },
      store,
      connection: server.connection,
      queueName,
    });
    closers.push(() => worker.close());
    const lean = await createAgentClient({ connection: server.connection, queueName, store });
    closers.push(() => lean.close());
    const full = await createAgentClient({ connection: server.connection, queueName });
    closers.push(() => full.close());
    const queue = new Queue(queueName, { connection: server.connection });
    closers.push(() => queue.close());
    const raw = new Redis(server.connection);
    closers.push(() => raw.quit());

    const leanJob = await lean.execute({ agent: 'ledger', sessionId: 'lean', state: ledgerState('lean') });
    const result = await leanJob.finished({ timeoutMs: 60_000 });
    expect(result).toMatchObject({ sessionId: 'lean', workerId: worker.id, status: 'completed' });
    expect(result.state.finalResponse()).toBe(LEDGER_ANSWER);
    const stored = await store.load('lean');
    expect(result.version).toBe(stored?.version);
    expect(result.state.toJSON()).toEqual(stored?.state.toJSON());
    const leanRecord = (await Job.fromId(queue, leanJob.id)) as Job;
    expect(leanRecord.returnvalue).not.toHaveProperty('state');
    expect(leanRecord.returnvalue).toMatchObject({ sessionId: 'lean', version: result.version });

    // a client without the store still gets the copy
    const fullJob = await full.execute({ agent: 'ledger', sessionId: 'full', state: ledgerState('full') });
    expect((await fullJob.finished({ timeoutMs: 60_000 })).state.finalResponse()).toBe(LEDGER_ANSWER);
    const fullRecord = (await Job.fromId(queue, fullJob.id)) as Job;
    expect(fullRecord.returnvalue).toHaveProperty('state');

    const bytes = async (id: string) => Number(await raw.memory('USAGE', `bull:${queueName}:${id}`));
    console.log(
      `[lean-results] BullMQ job record of a finished 5-step session: ${await bytes(fullJob.id)} bytes with the state, ${await bytes(leanJob.id)} lean`,
    );
  }, 90_000);
});
