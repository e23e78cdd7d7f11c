import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAgentClient, createAgentWorker, RedisSessionStore } from '../../src/distributed/index';
import { InMemoryBudgetLedger } from '../../src/ledger/in-memory-budget-ledger';
import { createAgent } from '../../src/runtime/create-agent';
import { type RedisServer, startRedisServer } from '../distributed/support/redis-server';
import { stoppedByLedger } from './support/cap-scenario';
import { CALL_TOKENS, MAX_OUTPUT, PRICE, scripted } from './support/ledger-models';

let server: RedisServer;
beforeAll(async () => {
  server = await startRedisServer();
}, 20_000);
afterAll(async () => {
  await server?.stop();
});

describe('ledgerScopes through the worker pool', () => {
  it('charges the scopes client.execute names, and stops the job run at their cap', async () => {
    const queueName = `q-${randomUUID()}`;
    const connection = server.connection;
    const ledger = new InMemoryBudgetLedger();
    const store = new RedisSessionStore({ connection, prefix: `${queueName}:` });
    const model = scripted('m', [{ text: 'hello' }]);
    const agent = createAgent({
      model,
      ledger,
      store,
      modelOptions: { pricing: { m: PRICE }, callOptions: { maxOutputTokens: MAX_OUTPUT } },
    });
    const worker = await createAgentWorker({ agents: { a: () => agent }, store, connection, queueName });
    const client = await createAgentClient({ connection, queueName });
    try {
      const first = await client.execute({
        agent: 'a',
        sessionId: 's1',
        message: 'hi',
        ledgerScopes: ['user:1'],
      });
      expect((await first.finished()).status).toBe('completed');
      expect((await ledger.usage('user:1')).tokens).toBe(CALL_TOKENS);
      await ledger.setLimit('user:1', { maxTokens: CALL_TOKENS + 1 });
      const second = await client.execute({
        agent: 'a',
        sessionId: 's2',
        message: 'hi',
        ledgerScopes: ['user:1'],
      });
      const done = await second.finished();
      expect(stoppedByLedger(done.state, 'user:1')).toBe(true);
      expect(model.calls).toBe(1);
    } finally {
      await client.close();
      await worker.close();
      await store.close();
    }
  }, 60_000);
});
