import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { afterEach, describe, expect, it } from 'vitest';
import { chatScript, typing } from '../../examples/http-app';
import { modelDriver } from '../../src/drivers/model-driver';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { chatClient } from '../support/ai-chat';
import { cleanups, startApp } from '../support/chat-app';
import { type OpenAIServer, startOpenAIServer, textReply } from '../support/openai-server';
import { postJson, readChunks, userMessageBody } from '../support/ui-stream';

// biome-ignore lint/suspicious/noExplicitAny: parts are checked by shape
const partsOf = (message: { parts: unknown[] } | undefined): any[] => message?.parts ?? [];

describe('examples/http-app.ts', () => {
  it("answers the AI SDK's chat client: a tool call and a typed answer, then a payment approved in the chat; the chat is stored in SQLite", async () => {
    const { api, dbFile } = await startApp({ driver: typing(chatScript()) });
    const { chat, errors } = chatClient(api, 'trip-1');

    await chat.sendMessage({ text: 'What is the weather in Lisbon in May?' });
    expect(errors).toEqual([]);
    const first = partsOf(chat.lastMessage);
    expect(first.map((p) => p.type)).toEqual(['step-start', 'tool-search', 'step-start', 'text']);
    expect(first[1]).toMatchObject({ state: 'output-available', input: { query: 'Lisbon weather May' } });
    expect(first[3].text).toBe(
      'Lisbon is mild in May: highs of 22 °C, lows of 14 °C and about 5 rainy days.',
    );

    await chat.sendMessage({ text: 'Pay the hotel deposit.' });
    const asked = partsOf(chat.lastMessage).find((p) => p.type === 'tool-pay');
    expect(asked).toMatchObject({ state: 'approval-requested', input: { to: 'Hotel Lisboa', amount: 95 } });
    await chat.addToolApprovalResponse({ id: asked.approval.id, approved: true });
    await chat.sendMessage();
    expect(errors).toEqual([]);
    expect(chat.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    const paid = partsOf(chat.lastMessage);
    expect(paid.find((p) => p.type === 'tool-pay')).toMatchObject({
      state: 'output-available',
      output: { paid: 95, to: 'Hotel Lisboa' },
    });
    expect(paid.at(-1).text).toBe('Paid: €95 to Hotel Lisboa. Your room is held for May.');

    // another connection to the SQLite file reads the conversation back
    const reader = new SqliteSessionStore(dbFile);
    cleanups.push(() => reader.close());
    const stored = (await reader.load('trip-1'))?.state;
    expect(stored?.executionCount()).toBe(2);
    expect(stored?.status()).toBe('completed');
  });

  it('types the scripted answer word by word: text deltas between text-start and text-end', async () => {
    const { api } = await startApp({ driver: typing(chatScript()) });
    const chunks = await readChunks(await postJson(api, userMessageBody('typed', 'Weather?')));
    const deltas = chunks.filter((c) => c.type === 'text-delta').map((c) => c.delta);
    expect(deltas.length).toBeGreaterThan(5);
    expect(deltas.join('')).toBe(
      'Lisbon is mild in May: highs of 22 °C, lows of 14 °C and about 5 rainy days.',
    );
  });

  describe('with a streaming model (a loopback OpenAI-compatible server)', () => {
    let model: OpenAIServer | undefined;
    afterEach(async () => {
      await model?.close();
      model = undefined;
    });

    it("streams the model's deltas to the chat client", async () => {
      model = await startOpenAIServer([textReply('Lisbon is mild in May.', { prompt: 30, completion: 6 })]);
      const provider = createOpenAICompatible({ name: 'local', baseURL: model.baseURL, includeUsage: true });
      const { api } = await startApp({ driver: modelDriver(provider.chatModel('m'), { stream: true }) });
      const chunks = await readChunks(await postJson(api, userMessageBody('stream-1', 'Weather in Lisbon?')));
      expect(chunks.filter((c) => c.type === 'text-delta').length).toBeGreaterThan(1);
      const { chat, errors } = chatClient(api, 'stream-2');
      await chat.sendMessage({ text: 'Weather in Lisbon?' });
      expect(errors).toEqual([]);
      expect(partsOf(chat.lastMessage).at(-1)).toMatchObject({
        type: 'text',
        text: 'Lisbon is mild in May.',
      });
      expect(chat.lastMessage?.metadata).toMatchObject({ usage: { inputTokens: 30, outputTokens: 6 } });
      expect(model.requests[0]?.body.stream).toBe(true);
    });
  });

  it('serves the page and its bundled script (the AI SDK chat client, no CDN) under a strict CSP', async () => {
    const { url } = await startApp({ driver: chatScript() });
    const page = await fetch(url);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await page.text();
    expect(html).toContain('<script type="module" src="/chat.js"></script>');
    expect(html).not.toMatch(/https?:\/\//);
    const script = await fetch(`${url}/chat.js`);
    expect(script.headers.get('content-type')).toMatch(/^text\/javascript/);
    const code = await script.text();
    expect(code).toContain('/api/chat');
    expect(code).not.toMatch(/from\s*["']ai["']/); // bundled, not imported
    expect((await fetch(`${url}/nowhere`)).status).toBe(404);
    expect((await fetch(url, { method: 'DELETE' })).status).toBe(405);
  });
});

describe('npx tsx examples/http-app.ts (run directly)', () => {
  /** `node --import tsx examples/http-app.ts` with PORT=0 and CHAT_DB in `dir`, once it listens. */
  async function runApp(extraEnv: Record<string, string>, dir: string) {
    const env = Object.fromEntries(
      Object.entries(process.env).filter(([name]) => !name.startsWith('OPENAI_')),
    );
    const child = spawn(process.execPath, ['--import', 'tsx', 'examples/http-app.ts'], {
      env: { ...env, ...extraEnv, PORT: '0', CHAT_DB: join(dir, 'db', 'chat.db') },
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
        const found = /Chat on (http:\/\/127\.0\.0\.1:\d+) /.exec(stdout);
        if (found?.[1]) resolve(found[1]);
      });
      child.on('close', (code) =>
        reject(new Error(`exited with ${code} before listening: ${stdout}${stderr}`)),
      );
    });
    return { url, child, exited, stderr: () => stderr };
  }

  function tempDir(): string {
    const dir = mkdtempSync(join(tmpdir(), 'agent-machine-chat-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    return dir;
  }

  it('listens on 127.0.0.1:PORT, answers a chat, and shuts down on SIGINT with exit code 0', async () => {
    const dir = tempDir();
    const { url, child, exited, stderr } = await runApp({}, dir);
    expect((await fetch(url)).status).toBe(200);
    const chunks = await readChunks(
      await postJson(`${url}/api/chat`, userMessageBody('direct-1', 'Weather?')),
    );
    expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });

    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stderr()).toBe('');
    const store = new SqliteSessionStore(join(dir, 'db', 'chat.db'));
    cleanups.push(() => store.close());
    expect(await store.list()).toEqual(['direct-1']);
  });

  it('talks to a real model when OPENAI_API_KEY is set (here a loopback OpenAI-compatible server), streamed', async () => {
    const model = await startOpenAIServer([
      textReply('Lisbon is mild in May.', { prompt: 30, completion: 6 }),
    ]);
    cleanups.push(() => model.close());
    const { url, exited, stderr, child } = await runApp(
      { OPENAI_API_KEY: 'sk-test', OPENAI_BASE_URL: model.baseURL, OPENAI_MODEL: 'local-model' },
      tempDir(),
    );
    const chunks = await readChunks(await postJson(`${url}/api/chat`, userMessageBody('real-1', 'Weather?')));
    const deltas = chunks.filter((c) => c.type === 'text-delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.map((c) => c.delta).join('')).toBe('Lisbon is mild in May.');
    expect(model.requests[0]?.body).toMatchObject({ model: 'local-model', stream: true });
    expect(model.requests[0]?.headers.authorization).toBe('Bearer sk-test');
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stderr()).toBe('');
  });
});
