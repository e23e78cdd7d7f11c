import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type ChatServerOptions, chatScript, createChatServer } from '../../examples/http-app';
import { type Driver, modelDriver, SqliteSessionStore, scriptedDriver } from '../../src/index';
import { type OpenAIServer, startOpenAIServer, textReply } from '../support/openai-server';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A chat server on 127.0.0.1 (a free port) with its sessions in a temporary SQLite file. */
async function startChat(options: Omit<ChatServerOptions, 'store'> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'agent-machine-http-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const dbFile = join(dir, 'chat.db');
  const store = new SqliteSessionStore(dbFile);
  cleanups.push(() => store.close());
  const server = createChatServer({ ...options, store });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  cleanups.push(() => close(server));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, store, dbFile };
}

function close(server: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
}

// biome-ignore lint/suspicious/noExplicitAny: SSE data is whatever JSON the server sent
type SseEvent = { event: string; data: any };

function parseSse(text: string): SseEvent[] {
  return text
    .split('\n\n')
    .filter((block) => block.trim() !== '')
    .map((block) => {
      const lines = block.split('\n');
      const event = lines.find((l) => l.startsWith('event: '))?.slice('event: '.length) ?? 'message';
      const data = lines
        .filter((l) => l.startsWith('data: '))
        .map((l) => l.slice('data: '.length))
        .join('\n');
      return { event, data: JSON.parse(data) };
    });
}

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by the assertions
const json = (response: Response): Promise<any> => response.json();

const post = (url: string, body: string, init: RequestInit = {}) =>
  fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body, ...init });

async function chat(base: string, sessionId: string, message: string) {
  const response = await post(`${base}/chat/${sessionId}`, JSON.stringify({ message }));
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  return parseSse(await response.text());
}

describe('examples/http-app.ts', () => {
  it('runs two chat turns of one session over HTTP: agent events as SSE in order, the answer last, the session stored', async () => {
    const { url, dbFile } = await startChat({ driver: chatScript() });

    const first = await chat(url, 'trip-1', 'What is the weather in Lisbon in May?');
    expect(first.map((e) => e.event)).toEqual([
      'step.started',
      'tool.started',
      'tool.finished',
      'step.finished',
      'step.started',
      'step.finished',
      'execution.finished',
      'answer',
    ]);
    expect(first[1]?.data).toMatchObject({ toolName: 'search', args: { query: 'Lisbon weather May' } });
    expect(first[2]?.data).toMatchObject({ toolName: 'search', ok: true });
    expect(first[3]?.data).toMatchObject({ stepNumber: 1, stepType: 'tool_execution' });
    expect(first[6]?.data).toMatchObject({ status: 'completed', stepCount: 2 });
    expect(first.at(-1)?.data).toEqual({
      sessionId: 'trip-1',
      status: 'completed',
      stopReason: 'completed',
      answer: 'Lisbon is mild in May: highs of 22 °C, lows of 14 °C and about 5 rainy days.',
      steps: 2,
      usage: { inputTokens: 420, outputTokens: 52, totalTokens: 472, cost: 0 },
      errors: [],
    });

    const second = await chat(url, 'trip-1', 'And 3 nights in a mid-range hotel?');
    expect(second.map((e) => e.event)).toEqual([
      'step.started',
      'tool.started',
      'tool.finished',
      'step.finished',
      'step.started',
      'tool.started',
      'tool.finished',
      'step.finished',
      'step.started',
      'step.finished',
      'execution.finished',
      'answer',
    ]);
    expect(second[5]?.data).toMatchObject({ toolName: 'calculator', args: { expression: '3 * 95' } });
    expect(second.at(-1)?.data).toMatchObject({
      status: 'completed',
      answer: 'About €285: 3 nights at €95 in a mid-range hotel.',
      steps: 3,
    });
    // one execution per message, in the same conversation
    expect(second[0]?.data.executionId).not.toBe(first[0]?.data.executionId);
    expect(second[0]?.data.agentId).toBe(first[0]?.data.agentId);

    const response = await fetch(`${url}/sessions/trip-1`);
    expect(response.status).toBe(200);
    const summary = await json(response);
    expect(summary).toMatchObject({
      sessionId: 'trip-1',
      status: 'completed',
      stopReason: 'completed',
      executions: 2,
      steps: 3,
      usage: { totalTokens: 1078 },
    });
    expect(summary.messages.map((m: { role: string }) => m.role)).toEqual([
      'user',
      'assistant',
      'tool',
      'assistant',
      'user',
      'assistant',
      'tool',
      'assistant',
      'tool',
      'assistant',
    ]);
    expect(summary.messages[4]).toEqual({ role: 'user', content: 'And 3 nights in a mid-range hotel?' });
    expect(summary.messages[7]).toEqual({
      role: 'assistant',
      content: '',
      toolCalls: [{ name: 'calculator', args: { expression: '3 * 95' } }],
    });
    expect(summary.messages[8]).toMatchObject({ role: 'tool', content: '285' });

    // the session is in the SQLite file: another connection reads it back
    const reader = new SqliteSessionStore(dbFile);
    cleanups.push(() => reader.close());
    const stored = await reader.load('trip-1');
    expect(stored?.state.executionCount()).toBe(2);
    expect(stored?.state.finalResponse()).toBe('About €285: 3 nights at €95 in a mid-range hotel.');
  });

  describe('with a streaming model (a loopback OpenAI-compatible server)', () => {
    let model: OpenAIServer | undefined;
    afterEach(async () => {
      await model?.close();
      model = undefined;
    });

    it('streams the text as text.delta events before the answer', async () => {
      model = await startOpenAIServer([textReply('Lisbon is mild in May.', { prompt: 30, completion: 6 })]);
      const provider = createOpenAICompatible({ name: 'local', baseURL: model.baseURL, includeUsage: true });
      const { url } = await startChat({ driver: modelDriver(provider.chatModel('m'), { stream: true }) });
      const events = await chat(url, 'stream-1', 'Weather in Lisbon?');
      const names = events.map((e) => e.event);
      expect(names[0]).toBe('step.started');
      expect(names.slice(-3)).toEqual(['step.finished', 'execution.finished', 'answer']);
      const deltas = events.filter((e) => e.event === 'text.delta');
      expect(deltas.length).toBeGreaterThan(1);
      expect(names.slice(1, 1 + deltas.length).every((n) => n === 'text.delta')).toBe(true);
      expect(deltas.map((e) => e.data.delta).join('')).toBe('Lisbon is mild in May.');
      expect(events.at(-1)?.data).toMatchObject({
        answer: 'Lisbon is mild in May.',
        usage: { inputTokens: 30, outputTokens: 6 },
      });
      expect(model.requests[0]?.body.stream).toBe(true);
    });
  });

  describe('refuses bad requests with a JSON error naming the problem', () => {
    it.each([
      [
        'invalid JSON',
        'POST',
        '/chat/s1',
        '{"message": ',
        400,
        'INVALID_JSON',
        /The body is not JSON \(.+\); send/,
      ],
      [
        'no message',
        'POST',
        '/chat/s1',
        '{"text": "hi"}',
        400,
        'INVALID_REQUEST',
        /"message" must be a string/,
      ],
      [
        'an empty message',
        'POST',
        '/chat/s1',
        '{"message": "  "}',
        400,
        'INVALID_REQUEST',
        /"message" must not be empty/,
      ],
      [
        'a message that is not a string',
        'POST',
        '/chat/s1',
        '{"message": 42}',
        400,
        'INVALID_REQUEST',
        /"message" must be a string/,
      ],
      ['a body that is not an object', 'POST', '/chat/s1', '[]', 400, 'INVALID_REQUEST', /expected object/],
      [
        'a session id with a path',
        'POST',
        '/chat/..%2Fetc',
        '{"message": "hi"}',
        400,
        'INVALID_SESSION_ID',
        /Invalid session id "\.\.\/etc": it contains "\/"/,
      ],
      [
        'a session id with a space',
        'GET',
        '/sessions/my%20chat',
        undefined,
        400,
        'INVALID_SESSION_ID',
        /Invalid session id "my chat"/,
      ],
      [
        'a session id that is bad URL encoding',
        'POST',
        '/chat/%E0%A4%A',
        '{"message": "hi"}',
        400,
        'INVALID_SESSION_ID',
        /not valid URL encoding/,
      ],
      [
        'an unknown session',
        'GET',
        '/sessions/nobody',
        undefined,
        404,
        'SESSION_NOT_FOUND',
        /No session "nobody"/,
      ],
      [
        'the wrong method',
        'GET',
        '/chat/s1',
        undefined,
        405,
        'METHOD_NOT_ALLOWED',
        /Use POST \/chat\/:sessionId/,
      ],
      [
        'a route named like an Object property',
        'GET',
        '/constructor/x',
        undefined,
        404,
        'NOT_FOUND',
        /No route \/constructor\/x/,
      ],
      [
        'an unknown route',
        'GET',
        '/nowhere',
        undefined,
        404,
        'NOT_FOUND',
        /use POST \/chat\/:sessionId or GET \/sessions\/:sessionId/,
      ],
    ] as const)('%s', async (_name, method, path, body, status, code, message) => {
      const { url, store } = await startChat({ driver: chatScript() });
      const response = await fetch(`${url}${path}`, {
        method,
        ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } }),
      });
      expect(response.status).toBe(status);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      const { error } = await json(response);
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message);
      if (status === 405) expect(response.headers.get('allow')).toBe('POST');
      expect(await store.list()).toEqual([]); // nothing was run or stored
    });
  });

  it('refuses a second message while the session is still answering (409), and answers the first', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const script = chatScript();
    const gated: Driver = {
      name: 'gated',
      infer: async (state, context) => {
        await gate;
        return script.infer(state, context);
      },
    };
    const { url } = await startChat({ driver: gated });
    // fetch resolves with the headers, which go out with the first event (step.started)
    const first = await post(
      `${url}/chat/busy`,
      JSON.stringify({ message: 'What is the weather in Lisbon?' }),
    );
    expect(first.status).toBe(200);

    const second = await post(`${url}/chat/busy`, JSON.stringify({ message: 'Hello?' }));
    expect(second.status).toBe(409);
    expect((await json(second)).error).toMatchObject({
      code: 'SESSION_BUSY',
      message: 'Session "busy" is still answering; wait for it.',
    });

    release();
    const events = parseSse(await first.text());
    expect(events.at(-1)).toMatchObject({ event: 'answer', data: { status: 'completed', steps: 2 } });
  });

  it('stops the run when the client disconnects; the session is stored stopped', async () => {
    const { url, store } = await startChat({
      driver: scriptedDriver([{ text: 'too late', delayMs: 60_000 }]),
    });
    const client = new AbortController();
    const response = await post(`${url}/chat/gone`, JSON.stringify({ message: 'Hello' }), {
      signal: client.signal,
    });
    expect(response.status).toBe(200);
    client.abort();
    await vi.waitUntil(async () => (await store.load('gone'))?.state.status() === 'stopped', {
      timeout: 10_000,
      interval: 20,
    });
    const summary = await json(await fetch(`${url}/sessions/gone`));
    expect(summary).toMatchObject({ status: 'stopped', stopReason: 'user_requested', steps: 0 });
    expect(summary.messages).toEqual([{ role: 'user', content: 'Hello' }]);
  });
});

describe('npx tsx examples/http-app.ts (run directly)', () => {
  it('listens on 127.0.0.1:PORT, answers a chat, and shuts down on SIGINT with exit code 0', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-machine-http-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('OPENAI_')),
    );
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/http-app.ts'], {
      env: { ...env, PORT: '0', CHAT_DB: join(dir, 'db', 'chat.db') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    cleanups.push(() => {
      if (child.exitCode === null) child.kill('SIGKILL');
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    const url = await new Promise<string>((resolve, reject) => {
      let stdout = '';
      child.stdout.on('data', (chunk) => {
        stdout += chunk;
        const found = /Chat server on (http:\/\/127\.0\.0\.1:\d+) /.exec(stdout);
        if (found?.[1]) resolve(found[1]);
      });
      child.on('close', (code) =>
        reject(new Error(`exited with ${code} before listening: ${stdout}${stderr}`)),
      );
    });

    const events = await chat(url, 'direct-1', 'What is the weather in Lisbon in May?');
    expect(events.at(-1)).toMatchObject({ event: 'answer', data: { status: 'completed', steps: 2 } });
    expect(await json(await fetch(`${url}/sessions/direct-1`))).toMatchObject({ status: 'completed' });

    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stderr).toBe('');
    // the SQLite file was created where CHAT_DB said, folders included, and holds the session
    const store = new SqliteSessionStore(join(dir, 'db', 'chat.db'));
    cleanups.push(() => store.close());
    expect(await store.list()).toEqual(['direct-1']);
  });
});
