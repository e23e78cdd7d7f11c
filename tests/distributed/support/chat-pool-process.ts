/**
 * A process of the pool chat tests, over one redis-server (REDIS_PORT) with a RedisSessionStore
 * and a RedisStreamStore (PREFIX), queue QUEUE. ROLE=web: createChatHandler({ client, agent:
 * 'typist', store, streams }) on 127.0.0.1 and a free port, printed as `{"port":N}`. ROLE=worker:
 * createAgentWorker({ agents: { typist }, store, streams }) (the typing agent: WORDS words, one
 * every WORD_DELAY_MS; its search appends `TAG <call id>` to LEDGER), printing `{"ready":"TAG"}`.
 * Runs until killed, or until its stdin ends (the test process is gone).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createChatHandler } from '../../../src/chat/chat-handler';
import { toNodeHandler } from '../../../src/chat/node-handler';
import {
  createAgentClient,
  createAgentWorker,
  RedisSessionStore,
  RedisStreamStore,
} from '../../../src/distributed/index';
import { typingAgent } from '../../support/typing-agent';

const env = process.env;
const connection = { host: '127.0.0.1', port: Number(env.REDIS_PORT) };
const store = new RedisSessionStore({ connection, prefix: env.PREFIX });
const streams = new RedisStreamStore({ connection, prefix: env.PREFIX });
const queueName = env.QUEUE as string;

if (env.ROLE === 'web') {
  const client = await createAgentClient({ connection, queueName });
  const handler = createChatHandler({ client, agent: 'typist', store, streams });
  const server = createServer(toNodeHandler(handler));
  server.listen(0, '127.0.0.1', () => {
    console.log(JSON.stringify({ port: (server.address() as AddressInfo).port }));
  });
} else {
  const tag = env.TAG as string;
  await createAgentWorker({
    agents: {
      typist: () =>
        typingAgent({
          words: Number(env.WORDS),
          wordDelayMs: Number(env.WORD_DELAY_MS),
          ledger: env.LEDGER,
          tag,
        }),
    },
    store,
    streams,
    connection,
    queueName,
    id: tag,
    // a dead worker's run is taken over within about 3 s
    lockDurationMs: 3_000,
    stalledIntervalMs: 500,
    sessionLockTtlMs: 2_000,
    busyRetryDelayMs: 100,
  });
  console.log(JSON.stringify({ ready: tag }));
}
process.stdin.on('end', () => process.exit(1));
process.stdin.resume();
