/**
 * Chats served by the worker pool: web processes (createChatHandler({ client })) enqueue each
 * message as a job, worker processes (createAgentWorker({ streams })) run it and write its stream
 * to Redis, and the web process relays it. The AI SDK's own chat client against real processes
 * over one redis-server: the answer, a stop from another web process, a web process killed
 * mid-answer (the client resumes on another), a worker killed mid-run (another finishes it).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UIMessage } from 'ai';
import { DefaultChatTransport as Ai6Transport } from 'ai6';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AI_SDK_VERSION_HEADER } from '../../src/chat/client-version';
import { RedisSessionStore } from '../../src/distributed/index';
import { chatClient } from '../support/ai-chat';
import { ai6ChatClient } from '../support/ai6-chat';
import { textOf } from '../support/chat-fixtures';
import { answerText } from '../support/typing-agent';
import { readLedger } from './support/ledger-agent';
import { type RedisServer, startRedisServer } from './support/redis-server';

const WORDS = 60;

let redis: RedisServer;
let dir: string;
let env: Record<string, string>;
const processes: ChildProcess[] = [];

interface Started {
  readonly child: ChildProcess;
  readonly line: Record<string, unknown>;
  kill(): Promise<void>;
}

/** Starts tests/distributed/support/chat-pool-process.ts; resolves with the JSON line it prints once ready. */
async function start(extra: Record<string, string>): Promise<Started> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', join(import.meta.dirname, 'support/chat-pool-process.ts')],
    { env: { ...process.env, ...env, ...extra }, stdio: ['pipe', 'pipe', 'inherit'] },
  );
  processes.push(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const line = await new Promise<Record<string, unknown>>((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (data: Buffer) => {
      out += data.toString();
      const found = /^\{.*\}$/m.exec(out);
      if (found) resolve(JSON.parse(found[0]));
    });
    child.once('exit', (code) =>
      reject(new Error(`the process exited (${code}) before it was ready: ${out}`)),
    );
  });
  return {
    child,
    line,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

async function web(): Promise<{ api: string; process: Started }> {
  const started = await start({ ROLE: 'web' });
  return { api: `http://127.0.0.1:${started.line.port}/api/chat`, process: started };
}

const worker = (tag: string) => start({ ROLE: 'worker', TAG: tag });

beforeAll(async () => {
  redis = await startRedisServer();
  dir = mkdtempSync(join(tmpdir(), 'chat-pool-'));
  env = {
    REDIS_PORT: String(redis.port),
    PREFIX: `pool-${randomUUID()}:`,
    QUEUE: `pool-${randomUUID()}`,
    WORDS: String(WORDS),
    WORD_DELAY_MS: '20',
    LEDGER: join(dir, 'ledger.txt'),
  };
}, 30_000);

afterAll(async () => {
  for (const child of processes) child.kill('SIGKILL');
  await redis?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Resolves once `condition` holds (checked every few ms; the test's timeout is the safety net). */
async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 5));
}

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

const EXPECTED = [
  { type: 'step-start' },
  { type: 'tool-search', state: 'output-available', input: { query: 'lisbon' }, output: 'found lisbon' },
  { type: 'step-start' },
  { type: 'text', text: answerText(WORDS), state: 'done' },
];

const json = { 'content-type': 'application/json' };

async function storedState(chatId: string) {
  const store = new RedisSessionStore({ connection: redis.connection, prefix: env.PREFIX });
  try {
    return (await store.load(chatId))?.state;
  } finally {
    await store.close();
  }
}

describe('a chat served by the worker pool', () => {
  let first: string;
  let second: string;
  let pool: Started[] = [];

  beforeAll(async () => {
    [{ api: first }, { api: second }] = await Promise.all([web(), web()]);
    pool = await Promise.all([worker('w1'), worker('w2')]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(pool.map((w) => w.kill()));
  });

  it('a message posted to a web process is run by a worker; the AI SDK chat client gets the answer', async () => {
    const chatId = `answer-${randomUUID()}`;
    const { chat, errors } = chatClient(first, chatId);
    const sent = chat.sendMessage({ text: 'Lisbon?' });
    await until(() => words(chat.messages.at(-1)) >= 1);
    // one run per chat across the web processes
    const busy = await fetch(second, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({
        id: chatId,
        trigger: 'submit-message',
        messages: [{ id: 'u2', role: 'user', parts: [{ type: 'text', text: 'And Porto?' }] }],
      }),
    });
    expect(busy.status).toBe(409);
    expect(((await busy.json()) as { error: { code: string } }).error.code).toBe('SESSION_BUSY');
    await sent;
    expect(errors).toEqual([]);
    const answer = chat.messages.at(-1);
    expect(seen(answer)).toEqual(EXPECTED);
    expect(answer?.metadata).toMatchObject({ status: 'completed', stopReason: 'completed' });
    const stored = (await (await fetch(`${second}/${chatId}/messages`)).json()) as { messages: UIMessage[] };
    expect(stored.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(seen(stored.messages.at(-1))).toEqual(EXPECTED);
    expect((await fetch(`${second}/${chatId}/stream`)).status).toBe(204);
  }, 60_000);

  it('POST <api>/<id>/stop on another web process stops the run on the worker; the stream ends with finish', async () => {
    const chatId = `stop-${randomUUID()}`;
    const { chat, errors } = chatClient(first, chatId);
    const sent = chat.sendMessage({ text: 'Lisbon?' });
    await until(() => words(chat.messages.at(-1)) >= 3);
    const stop = await fetch(`${second}/${chatId}/stop`, { method: 'POST', headers: json, body: '{}' });
    expect(stop.status).toBe(202);
    expect(await stop.json()).toEqual({ id: chatId, stopping: true });
    await sent;
    expect(errors).toEqual([]);
    expect(words(chat.messages.at(-1))).toBeLessThan(WORDS);
    expect(chat.messages.at(-1)?.metadata).toMatchObject({ status: 'stopped', stopReason: 'user_requested' });
    const state = await storedState(chatId);
    expect(state?.status()).toBe('stopped');
    expect(state?.stopReason()).toBe('user_requested');
    // what the page saw of the answer is the stopped assistant message, as a reload finds it
    const live = textOf(chat.messages.at(-1));
    expect(words(chat.messages.at(-1))).toBeGreaterThanOrEqual(3);
    expect(state?.messages().at(-1)).toMatchObject({
      role: 'assistant',
      content: live,
      metadata: { stopped_answer: true },
    });
    const reloaded = (await (await fetch(`${second}/${chatId}/messages`)).json()) as {
      messages: UIMessage[];
    };
    expect(textOf(reloaded.messages.at(-1))).toBe(live);
    const again = await fetch(`${first}/${chatId}/stop`, { method: 'POST', headers: json, body: '{}' });
    expect(await again.json()).toEqual({ id: chatId, stopping: false });
  }, 60_000);

  it('a web process killed mid-answer: the client resumes on another and ends with the same message', async () => {
    const { api: doomed, process: doomedProcess } = await web();
    const chatId = `web-kill-${randomUUID()}`;
    const { chat } = chatClient(doomed, chatId);
    const sent = chat.sendMessage({ text: 'Lisbon?' });
    await until(() => words(chat.messages.at(-1)) >= 10);
    await doomedProcess.kill();
    await sent;
    // the page reloaded against another web process: the stored conversation, then the run's stream
    const stored = (await (await fetch(`${second}/${chatId}/messages`)).json()) as { messages: UIMessage[] };
    const { chat: resumed, errors } = chatClient(second, chatId, { messages: stored.messages });
    await resumed.resumeStream();
    let final = resumed.messages.at(-1);
    // a run that ended before the resume is read from the store (204 for the stream)
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
    expect(seen(final)).toEqual(EXPECTED);
    expect(resumed.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
  }, 60_000);

  it('a worker killed mid-run: another worker finishes it; the client gets each step once and a data-step-restarted part', async () => {
    const ledger = env.LEDGER as string;
    const before = readLedger(ledger).length;
    const chatId = `worker-kill-${randomUUID()}`;
    const data: unknown[] = [];
    const { chat, errors } = chatClient(first, chatId, { onData: (part) => data.push(part) });
    const sent = chat.sendMessage({ text: 'Lisbon?' });
    // the worker that ran the search runs the chat: killed while it types the answer
    await until(() => readLedger(ledger).length > before && words(chat.messages.at(-1)) >= 10);
    const runner = readLedger(ledger)[before]?.worker;
    const victim = pool.find((w) => w.line.ready === runner) as Started;
    await victim.kill();
    // a page reloaded once the run was taken over reads the stream from its start: mended too
    await until(() => data.length > 0);
    const stored = (await (await fetch(`${second}/${chatId}/messages`)).json()) as { messages: UIMessage[] };
    const { chat: reloaded, errors: reloadErrors } = chatClient(second, chatId, {
      messages: stored.messages,
    });
    await reloaded.resumeStream();
    await sent;
    expect(errors).toEqual([]);
    expect(reloadErrors).toEqual([]);
    // (unless the run ended before the reload asked for its stream: 204)
    if (words(reloaded.messages.at(-1)) > 0) expect(seen(reloaded.messages.at(-1))).toEqual(EXPECTED);
    const answer = chat.messages.at(-1);
    expect(seen(answer)).toEqual(EXPECTED);
    expect(answer?.metadata).toMatchObject({ status: 'completed', stopReason: 'completed' });
    expect(data).toEqual([
      {
        type: 'data-step-restarted',
        data: { stepNumber: 2, workerId: expect.not.stringMatching(String(runner)) },
        transient: true,
      },
    ]);
    const state = await storedState(chatId);
    expect(state?.status()).toBe('completed');
    expect(state?.stepCount()).toBe(2);
    // the search ran once: its step was saved before the kill
    expect(readLedger(ledger).slice(before)).toHaveLength(1);
  }, 90_000);

  it("a worker killed mid-run with AI SDK 6's chat client (x-ai-sdk-version: 6): no reset-step, the answer completes", async () => {
    const ledger = env.LEDGER as string;
    const before = readLedger(ledger).length;
    const chatId = `worker-kill-ai6-${randomUUID()}`;
    const data: unknown[] = [];
    const transport = new Ai6Transport({ api: first, headers: { [AI_SDK_VERSION_HEADER]: '6' } });
    const { chat, errors } = ai6ChatClient(first, chatId, { transport, onData: (part) => data.push(part) });
    const sent = chat.sendMessage({ text: 'Lisbon?' });
    await until(() => readLedger(ledger).length > before && words(chat.messages.at(-1) as UIMessage) >= 10);
    const runner = readLedger(ledger)[before]?.worker;
    const victim = pool.find((w) => w.line.ready === runner) as Started;
    await victim.kill();
    pool = [...pool.filter((w) => w !== victim), await worker(`${runner}-again`)];
    await sent;
    expect(errors).toEqual([]);
    expect(data).toEqual([expect.objectContaining({ type: 'data-step-restarted' })]);
    const answer = chat.messages.at(-1) as UIMessage;
    expect(answer?.metadata).toMatchObject({ status: 'completed', stopReason: 'completed' });
    // the interrupted step's words stay before the step as it ran again, which ends the message
    const texts = answer.parts.filter((p) => p.type === 'text').map((p) => (p as { text: string }).text);
    expect(texts.at(-1)).toBe(answerText(WORDS));
    // a reload reads the stored chat: each step once
    const stored = (await (await fetch(`${second}/${chatId}/messages`)).json()) as { messages: UIMessage[] };
    expect(seen(stored.messages.at(-1))).toEqual(EXPECTED);
  }, 90_000);
});
