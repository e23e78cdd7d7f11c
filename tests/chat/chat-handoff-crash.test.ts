/**
 * Issue #35: a message queued (or steered) to a chat's run is kept in the stream store until it is
 * in the session: when the process running the chat dies before taking it, the chat's next run,
 * in whichever process claims the chat once the stream's lease ran out, takes it first, once.
 * Two real handler processes over one redis-server and one SQLite file; the running one is
 * SIGKILLed mid-answer.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisStreamStore } from '../../src/distributed/index';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { type RedisServer, startRedisServer } from '../distributed/support/redis-server';
import { chatClient } from '../support/ai-chat';
import { chatProcesses, until } from '../support/chat-processes';
import { postJson, readChunks, userMessageBody } from '../support/ui-stream';

const PREFIX = 'handoff-test:';
let redis: RedisServer;
let dir: string;
let streams: RedisStreamStore;
const processes = chatProcesses(join(import.meta.dirname, 'support/chat-process.ts'));

beforeAll(async () => {
  redis = await startRedisServer();
  dir = mkdtempSync(join(tmpdir(), 'chat-handoff-'));
  streams = new RedisStreamStore({ connection: { host: '127.0.0.1', port: redis.port }, prefix: PREFIX });
}, 60_000);

afterAll(async () => {
  processes.killAll();
  await streams?.close();
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A process serving the chat with `whileRunning`, a short stream lease (renewed often) and short blocking reads. */
function serve(whileRunning: 'queue' | 'steer', hold: boolean) {
  return processes.start({
    REDIS_PORT: String(redis.port),
    STREAM_PREFIX: PREFIX,
    CHAT_DB: join(dir, 'chats.db'),
    WORDS: '8',
    WORD_DELAY_MS: '5',
    WHILE_RUNNING: whileRunning,
    LEASE_MS: '5000',
    STREAM_RENEW_MS: '250',
    BLOCK_MS: '100',
    ...(hold && { HOLD_AFTER_WORDS: '2' }),
  });
}

async function userMessages(chatId: string): Promise<string[]> {
  const store = new SqliteSessionStore(join(dir, 'chats.db'));
  try {
    const state = (await store.load(chatId))?.state;
    return (state?.messages() ?? []).filter((m) => m.role === 'user').map((m) => m.content);
  } finally {
    await store.close();
  }
}

describe.each(['queue', 'steer'] as const)(
  "whileRunning: '%s', the running process killed",
  (whileRunning) => {
    it('a message handed to the run through the other process is answered by the next run there, once', async () => {
      const chatId = `crash-${whileRunning}`;
      const [a, b] = await Promise.all([serve(whileRunning, true), serve(whileRunning, false)]);
      // A answers, and holds its answer after two words.
      const first = chatClient(a.api, chatId);
      void first.chat.sendMessage({ text: 'Lisbon?' });
      expect(await first.responded('POST')).toBe(200);
      await until(async () => (await streams.active(chatId)) !== null);
      // B hands the message to the run in A (200: it did not start a run of its own).
      const handing = await postJson(b.api, userMessageBody(chatId, 'And Porto?'));
      expect(handing.status).toBe(200);
      const handedStream = readChunks(handing);
      expect((await streams.handedOff(chatId)).map((h) => h.message.content)).toEqual(['And Porto?']);
      const exited = new Promise((resolve) => a.child.once('exit', resolve));
      a.child.kill('SIGKILL');
      await exited;
      // A's stream lease runs out (5 s); the stream B relayed ends with it.
      await until(async () => (await streams.active(chatId)) === null);
      await handedStream;
      expect(await userMessages(chatId)).toEqual(['Lisbon?']);

      // The chat's next run, on B, takes the handed-off message first.
      const stored = (await (await fetch(`${b.api}/${chatId}/messages`)).json()) as { messages: never[] };
      const next = chatClient(b.api, chatId, { messages: stored.messages });
      await next.chat.sendMessage({ text: 'And Faro?' });
      expect(next.errors).toEqual([]);
      expect(await userMessages(chatId)).toEqual(['Lisbon?', 'And Porto?', 'And Faro?']);
      expect(await streams.handedOff(chatId)).toEqual([]);

      // and never again
      await readChunks(await postJson(b.api, userMessageBody(chatId, 'Thanks.')));
      expect(await userMessages(chatId)).toEqual(['Lisbon?', 'And Porto?', 'And Faro?', 'Thanks.']);
      b.child.kill('SIGKILL');
    }, 60_000);
  },
);
