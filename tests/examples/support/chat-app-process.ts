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
import { typingDriver } from '../../support/typing-agent';

const connection = { host: '127.0.0.1', port: Number(process.env.REDIS_PORT) };
const prefix = process.env.STREAM_PREFIX ?? 'chat-app:';
const holdAfter = Number(process.env.HOLD_AFTER_WORDS ?? Infinity);
const script = chatScript();
let held = false;

/** The script's answers, their text reported word by word; the first answer waits at the gate mid-way. */
const driver = typingDriver(
  script,
  async (i) => {
    if (i !== holdAfter || held) return;
    held = true;
    const gate = new Redis(connection);
    await gate.blpop(`${prefix}gate`, 0);
    gate.disconnect();
  },
  'typing, held mid-answer',
);

const server = createChatApp({
  dbFile: process.env.CHAT_DB as string,
  driver,
  streams: new RedisStreamStore({ connection, prefix }),
});
server.listen(0, '127.0.0.1', () => {
  console.log(JSON.stringify({ port: (server.address() as AddressInfo).port }));
});
