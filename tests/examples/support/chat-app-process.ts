/**
 * The example chat app (examples/http-app.ts) as one of several processes serving it: its chats in
 * the SQLite file CHAT_DB, its runs' streams in Redis (REDIS_PORT, STREAM_PREFIX). Prints
 * `{"port":N}` once it listens on 127.0.0.1. The scripted model types its answers word by word;
 * after HOLD_AFTER_WORDS words of the first answer it waits until the Redis list `<prefix>gate`
 * gets an item (a test holds the answer mid-way with it). Runs until killed.
 */
import type { AddressInfo } from 'node:net';
import { Redis } from 'ioredis';
import { chatScript, createChatApp } from '../../../examples/http-app';
import { RedisStreamStore } from '../../../src/distributed/index';
import type { Driver } from '../../../src/index';

const connection = { host: '127.0.0.1', port: Number(process.env.REDIS_PORT) };
const prefix = process.env.STREAM_PREFIX ?? 'chat-app:';
const holdAfter = Number(process.env.HOLD_AFTER_WORDS ?? Infinity);
const script = chatScript();
let held = false;

/** The script's answers, their text reported word by word; the first answer waits at the gate mid-way. */
const driver: Driver = {
  name: 'typing, held mid-answer',
  async infer(state, context) {
    const answered = await script.infer(state, context);
    const text = answered.currentStep()?.outputText() ?? '';
    const ids = {
      agentId: state.agentId(),
      parentAgentId: state.parentAgentId(),
      executionId: state.executionId() ?? '',
      stepNumber: state.stepCount() + 1,
    };
    for (const [i, delta] of (text.match(/\S+\s*/g) ?? []).entries()) {
      if (i === holdAfter && !held) {
        held = true;
        const gate = new Redis(connection);
        await gate.blpop(`${prefix}gate`, 0);
        gate.disconnect();
      }
      context.report({ type: 'text.delta', ...ids, delta });
    }
    return answered;
  },
};

const server = createChatApp({
  dbFile: process.env.CHAT_DB as string,
  driver,
  streams: new RedisStreamStore({ connection, prefix }),
});
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ port: (server.address() as AddressInfo).port }));
});
