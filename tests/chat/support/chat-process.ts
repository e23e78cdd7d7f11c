/**
 * A chat server process for the cross-process tests: createChatHandler over a SQLite session store
 * (CHAT_DB) and a RedisStreamStore (REDIS_PORT, STREAM_PREFIX) on 127.0.0.1 and a free port, which
 * it prints as `{"port":N}`. The model searches, then types WORDS words, one every WORD_DELAY_MS
 * (aborted by a stop). Runs until killed. Optional: WHILE_RUNNING (the handler's `whileRunning`),
 * LEASE_MS and BLOCK_MS (the stream store's), STREAM_RENEW_MS, and HOLD_AFTER_WORDS: the model
 * stops typing after that many words and waits until the run is stopped (a process to kill mid-run);
 * a chat whose first message says `(hold after N)` does so after N words.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { createChatHandler } from '../../../src/chat/chat-handler';
import { toNodeHandler } from '../../../src/chat/node-handler';
import { RedisStreamStore } from '../../../src/distributed/index';
import { abortableDelay } from '../../../src/drivers/abortable-delay';
import type { Driver } from '../../../src/drivers/driver';
import { scriptedDriver } from '../../../src/drivers/scripted-driver';
import { SqliteSessionStore } from '../../../src/persistence/sqlite-session-store';
import { createAgent } from '../../../src/runtime/create-agent';
import { defineTool } from '../../../src/tools/define-tool';
import { answerText, typingDriver } from '../../support/typing-agent';

const words = Number(process.env.WORDS ?? 40);
const wordDelayMs = Number(process.env.WORD_DELAY_MS ?? 5);
const holdAfter =
  process.env.HOLD_AFTER_WORDS === undefined ? Infinity : Number(process.env.HOLD_AFTER_WORDS);
const optional = (name: string) => (process.env[name] === undefined ? undefined : Number(process.env[name]));

const search = defineTool({
  description: 'Search',
  inputSchema: z.object({ query: z.string() }),
  execute: async ({ query }) => `found ${query}`,
});
const script = scriptedDriver([
  (state) =>
    state.messages().at(-1)?.role === 'tool'
      ? { text: answerText(words) }
      : { toolCalls: [{ name: 'search', args: { query: 'lisbon' } }] },
]);
/**
 * The scripted answer, its text reported word by word with a delay, as a streaming model sends
 * it, holding before word `hold` until the run is stopped.
 */
const typingHeldAt = (hold: number) =>
  typingDriver(script, (i, signal) =>
    i > 0 ? abortableDelay(i >= hold ? 2 ** 31 - 1 : wordDelayMs, signal) : undefined,
  );
const plain = typingHeldAt(holdAfter);
/** A chat whose first message says `(hold after N)` types N words, then waits to be stopped. */
const typing: Driver = {
  name: 'typing',
  infer(state, context) {
    const asked = /\(hold after (\d+)\)/.exec(
      String(state.messages().find((m) => m.role === 'user')?.content),
    );
    return (asked ? typingHeldAt(Number(asked[1])) : plain).infer(state, context);
  },
};

const agent = createAgent({
  driver: typing,
  tools: { search },
  store: new SqliteSessionStore(process.env.CHAT_DB as string),
});
const streams = new RedisStreamStore({
  connection: { host: '127.0.0.1', port: Number(process.env.REDIS_PORT) },
  prefix: process.env.STREAM_PREFIX,
  leaseMs: optional('LEASE_MS'),
  blockMs: optional('BLOCK_MS'),
});
const handler = createChatHandler({
  agent,
  streams,
  whileRunning: (process.env.WHILE_RUNNING ?? 'reject') as 'reject' | 'steer' | 'queue',
  streamRenewMs: optional('STREAM_RENEW_MS'),
});
const server = createServer(toNodeHandler(handler));
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ port: (server.address() as AddressInfo).port }));
});
