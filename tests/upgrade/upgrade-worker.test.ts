import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentClient } from '../../src/distributed/agent-client';
import { createAgentWorker } from '../../src/distributed/agent-worker';
import { RedisSessionStore } from '../../src/distributed/redis-session-store';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import { type RedisServer, startRedisServer } from '../distributed/support/redis-server';
import { paymentAgent, v1, v2Options } from './fixtures/payment-agents';

let server: RedisServer;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  server = await startRedisServer();
}, 20_000);

afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  await server?.stop();
}, 20_000);

describe('a worker pool deployed with version 2 under sessions parked by version 1', () => {
  it('decide jobs migrate the sessions: the renamed tool runs once each, edits are checked against it, saved as version 2', async () => {
    const queueName = `q-${randomUUID()}`;
    const connection = server.connection;
    const store = new RedisSessionStore({ connection, prefix: `${queueName}:` });
    cleanups.push(() => store.close());
    const parking = v1(store);
    await parking.execute(AgentState.empty().withUserMessage('pay bob 40'), { sessionId: 'root' });
    await parking.execute(AgentState.empty().withUserMessage('nested: pay bob 40'), { sessionId: 'nested' });
    const paid: string[] = [];
    const client = await createAgentClient({ connection, queueName });
    cleanups.push(() => client.close());
    const worker = await createAgentWorker({
      agents: { pay: () => paymentAgent({ ...v2Options(store), paid: (id) => paid.push(id) }) },
      store,
      connection,
      queueName,
      sessionLockPrefix: `${queueName}:lock:`,
    });
    cleanups.push(() => worker.close());

    const parked = await store.load('root');
    const [rootCall] = parked?.state.pendingApprovals() ?? [];
    // an edit the renamed tool's schema refuses fails the job before anything is saved
    const refused = await client.decide({
      agent: 'pay',
      sessionId: 'root',
      decisions: [{ toolCallId: 't1', type: 'edit', args: { to: 'bob' }, signature: rootCall?.signature }],
    });
    await expect(refused.finished({ timeoutMs: 20_000 })).rejects.toMatchObject({
      errorCode: 'APPROVAL_INVALID_EDIT',
    });
    expect((await store.load('root'))?.version).toBe(parked?.version);
    for (const sessionId of ['root', 'nested']) {
      const [pending] = (await store.load(sessionId))?.state.pendingApprovals() ?? [];
      const job = await client.decide({
        agent: 'pay',
        sessionId,
        decisions: [
          {
            toolCallId: 't1',
            type: 'approve',
            signature: pending?.signature,
            ...(pending?.callPath && { callPath: pending.callPath }),
          },
        ],
      });
      const result = await job.finished({ timeoutMs: 20_000 });
      expect(result.status).toBe(ExecutionStatus.Completed);
      expect((await store.load(sessionId))?.state.agentVersion()).toBe('2');
    }
    expect(paid).toEqual(['t1', 't1']);
  });
});
