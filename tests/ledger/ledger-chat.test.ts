import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createChatHandler } from '../../src/chat/chat-handler';
import {
  createAgentClient,
  createAgentWorker,
  RedisSessionStore,
  RedisStreamStore,
} from '../../src/distributed/index';
import { InMemoryBudgetLedger } from '../../src/ledger/in-memory-budget-ledger';
import { createAgent } from '../../src/runtime/create-agent';
import { startRedisServer } from '../distributed/support/redis-server';
import { serveChat } from '../support/ai-chat';
import { startChat } from '../support/chat-fixtures';
import { readChunks, userMessageBody } from '../support/ui-stream';
import { stoppedByLedger } from './support/cap-scenario';
import { CALL_TOKENS, MAX_OUTPUT, PRICE, scripted } from './support/ledger-models';

const post = (api: string, body: string, user: string) =>
  fetch(api, { method: 'POST', headers: { 'content-type': 'application/json', 'x-user': user }, body });

describe('createChatHandler({ ledgerScopes })', () => {
  it("charges the scopes it maps each request to, and stops a user's run at the user's cap", async () => {
    const ledger = new InMemoryBudgetLedger();
    const model = scripted('m', [{ text: 'hello' }]);
    const asked: string[] = [];
    const { api, store } = await startChat(
      {
        model,
        ledger,
        modelOptions: { pricing: { m: PRICE }, callOptions: { maxOutputTokens: MAX_OUTPUT } },
      },
      {
        ledgerScopes: (request, chatId) => {
          asked.push(chatId);
          return ['tenant:acme', `user:${request.headers.get('x-user')}`];
        },
      },
    );
    await readChunks(await post(api, userMessageBody('c1', 'Hi'), '1'));
    expect(asked).toEqual(['c1']);
    expect((await ledger.usage('user:1')).tokens).toBe(CALL_TOKENS);
    expect((await ledger.usage('tenant:acme')).tokens).toBe(CALL_TOKENS);

    await ledger.setLimit('user:2', { maxTokens: 1 });
    await readChunks(await post(api, userMessageBody('c2', 'Hi'), '2'));
    expect(stoppedByLedger((await store.load('c2'))?.state as never, 'user:2')).toBe(true);
    expect(model.calls).toBe(1);
  });

  it('sends the scopes with the job of a chat served by the worker pool', async () => {
    const redis = await startRedisServer();
    const connection = redis.connection;
    const prefix = `q-${randomUUID()}:`;
    const queueName = `q-${randomUUID()}`;
    const store = new RedisSessionStore({ connection, prefix });
    const streams = new RedisStreamStore({ connection, prefix });
    const ledger = new InMemoryBudgetLedger();
    const agent = createAgent({
      model: scripted('m', [{ text: 'hello' }]),
      ledger,
      store,
      modelOptions: { pricing: { m: PRICE }, callOptions: { maxOutputTokens: MAX_OUTPUT } },
    });
    const worker = await createAgentWorker({
      agents: { a: () => agent },
      store,
      streams,
      connection,
      queueName,
    });
    const client = await createAgentClient({ connection, queueName });
    const handler = createChatHandler({
      client,
      agent: 'a',
      store,
      streams,
      ledgerScopes: (request) => [`user:${request.headers.get('x-user')}`],
    });
    const server = await serveChat(handler);
    try {
      await readChunks(await post(server.api, userMessageBody('p1', 'Hi'), '7'));
      expect((await ledger.usage('user:7')).tokens).toBe(CALL_TOKENS);
    } finally {
      await server.close();
      await client.close();
      await worker.close();
      await streams.close();
      await store.close();
      await redis.stop();
    }
  }, 60_000);
});
