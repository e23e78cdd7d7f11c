/**
 * A chat served by two processes over one Redis (RedisStreamStore) and one SQLite session file, as
 * replicas behind a load balancer are: a client that drops mid-answer on one resumes on the other
 * with the AI SDK's own chat client and ends with the message a client that never dropped got; a
 * stop asked of one process stops the run in the other; a second message is refused by both while
 * the chat answers. CHAT_DROPS sets how many random drop points are tried (default 4;
 * `npm run matrix:chat` runs 200).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { type RedisServer, startRedisServer } from '../distributed/support/redis-server';
import { chatClient } from '../support/ai-chat';
import { textOf } from '../support/chat-fixtures';
import { chatProcesses, until } from '../support/chat-processes';

const WORDS = 40;
const DROPS = Number(process.env.CHAT_DROPS ?? 4);
const seed = Number(process.env.CHAT_SEED ?? Date.now() % 100_000);

let redis: RedisServer;
let dir: string;
const processes = chatProcesses(join(import.meta.dirname, 'support/chat-process.ts'));
let first: string;
let second: string;

function random(): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

beforeAll(async () => {
  redis = await startRedisServer();
  dir = mkdtempSync(join(tmpdir(), 'chat-processes-'));
  const env = {
    REDIS_PORT: String(redis.port),
    STREAM_PREFIX: 'chat-test:',
    CHAT_DB: join(dir, 'chats.db'),
    WORDS: String(WORDS),
    WORD_DELAY_MS: '5',
  };
  [first, second] = (await Promise.all([processes.start(env), processes.start(env)])).map((p) => p.api) as [
    string,
    string,
  ];
}, 60_000);

afterAll(async () => {
  processes.killAll();
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Words of the answer's text so far (0 while the last message is the user's). */
const words = (message: UIMessage | undefined) =>
  message?.role !== 'assistant'
    ? 0
    : message.parts.flatMap((p) => (p.type === 'text' ? p.text.split(' ').filter(Boolean) : [])).length;

/** A message as the user sees it: its parts without the ids a run draws. */
function seen(message: UIMessage | undefined) {
  return (message?.parts ?? []).map((part) => {
    const { toolCallId: _id, providerMetadata: _meta, ...rest } = part as Record<string, unknown>;
    return rest;
  });
}

async function answerWithoutDrop(api: string, chatId: string): Promise<UIMessage | undefined> {
  const { chat } = chatClient(api, chatId);
  await chat.sendMessage({ text: 'Lisbon?' });
  return chat.messages.at(-1);
}

describe('a chat served by two processes over Redis', () => {
  it(
    `a client that drops mid-answer resumes on the other process with the same final message (${DROPS} random drop points, seed ${seed})`,
    async () => {
      const reference = seen(await answerWithoutDrop(first, 'reference'));
      expect(reference.filter((p) => p.type === 'text')).toHaveLength(1);
      const next = random();
      for (let trial = 0; trial < DROPS; trial++) {
        const chatId = `drop-${seed}-${trial}`;
        const dropAfter = 1 + Math.floor(next() * (WORDS - 1));
        const { chat, errors: firstErrors } = chatClient(first, chatId);
        let answered = false;
        const sent = chat.sendMessage({ text: 'Lisbon?' }).then(() => {
          answered = true;
        });
        await until(() => answered || words(chat.messages.at(-1)) >= dropAfter);
        expect(firstErrors).toEqual([]);
        await chat.stop(); // the connection drops (the page goes away)
        await sent;
        // A page reloaded against the other process: the stored conversation, then the run's stream.
        const stored = (await (await fetch(`${second}/${chatId}/messages`)).json()) as {
          messages: UIMessage[];
        };
        const { chat: resumed, errors } = chatClient(second, chatId, { messages: stored.messages });
        await resumed.resumeStream();
        // A run that ended before the resume is read from the store (204 for the stream).
        let final = resumed.messages.at(-1);
        if (words(final) < WORDS) {
          await until(async () => {
            const reloaded = (await (await fetch(`${second}/${chatId}/messages`)).json()) as {
              messages: UIMessage[];
            };
            final = reloaded.messages.at(-1);
            return words(final) === WORDS;
          });
        }
        expect(errors).toEqual([]);
        expect({ trial, dropAfter, parts: seen(final) }).toEqual({ trial, dropAfter, parts: reference });
      }
    },
    120_000 + DROPS * 5_000,
  );

  it('POST <api>/<id>/stop on one process stops the run in the other; its stream ends with finish', async () => {
    const chatId = `stop-${seed}`;
    const { chat, errors } = chatClient(first, chatId);
    // the model types 3 words, then waits for the stop: however loaded the machine, the stop comes mid-answer
    const sent = chat.sendMessage({ text: 'Lisbon? (hold after 3)' });
    await until(() => words(chat.messages.at(-1)) >= 3);
    const stop = await fetch(`${second}/${chatId}/stop`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(stop.status).toBe(202);
    expect(await stop.json()).toEqual({ id: chatId, stopping: true });
    await sent;
    expect(errors).toEqual([]);
    expect(words(chat.messages.at(-1))).toBeLessThan(WORDS);
    expect(chat.messages.at(-1)?.metadata).toMatchObject({ status: 'stopped', stopReason: 'user_requested' });
    const store = new SqliteSessionStore(join(dir, 'chats.db'));
    const saved = await store.load(chatId);
    await store.close();
    expect(saved?.state.status()).toBe('stopped');
    expect(saved?.state.stopReason()).toBe('user_requested');
    // what the page saw of the answer is the stopped assistant message, as a reload finds it
    const live = textOf(chat.messages.at(-1));
    expect(words(chat.messages.at(-1))).toBeGreaterThanOrEqual(3);
    expect(saved?.state.messages().at(-1)).toMatchObject({
      role: 'assistant',
      content: live,
      metadata: { stopped_answer: true },
    });
    const reloaded = (await (await fetch(`${second}/${chatId}/messages`)).json()) as {
      messages: UIMessage[];
    };
    expect(textOf(reloaded.messages.at(-1))).toBe(live);
    // Nothing runs now: another stop finds no run.
    const again = await fetch(`${first}/${chatId}/stop`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(await again.json()).toEqual({ id: chatId, stopping: false });
  }, 60_000);

  it('a message to either process while the chat answers is refused (409), and the stream is served by both', async () => {
    const chatId = `busy-${seed}`;
    const { chat } = chatClient(first, chatId);
    const sent = chat.sendMessage({ text: 'Lisbon?' });
    await until(() => words(chat.messages.at(-1)) >= 1);
    const body = JSON.stringify({
      id: chatId,
      trigger: 'submit-message',
      messages: [{ id: 'u2', role: 'user', parts: [{ type: 'text', text: 'And Porto?' }] }],
    });
    for (const api of [first, second]) {
      const refused = await fetch(api, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
      expect(refused.status).toBe(409);
      expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('SESSION_BUSY');
    }
    const stream = await fetch(`${second}/${chatId}/stream`);
    expect(stream.status).toBe(200);
    const text = await stream.text();
    expect(text).toContain('"type":"start"');
    expect(text).toContain('"type":"finish"');
    await sent;
    expect((await fetch(`${second}/${chatId}/stream`)).status).toBe(204);
  }, 60_000);
});
