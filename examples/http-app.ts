/**
 * npx tsx examples/http-app.ts     (open http://127.0.0.1:3000; set PORT to change it)
 *
 * A chat app on plain node:http: a page with the AI SDK's own chat client (the `AbstractChat` that
 * React's `useChat` wraps, bundled with esbuild when the server starts: no CDN, no React) talking
 * to `createChatHandler` at /api/chat. The chat id is the session id: conversations are kept in
 * SQLite (CHAT_DB, default ./.tmp/chat.db), tool calls show as they run, a payment waits for your
 * approval in the page, and a page reloaded mid-answer picks the answer up where it is.
 *
 * Offline a scripted model answers (and types its text word by word). With OPENAI_API_KEY set
 * (OPENAI_BASE_URL and OPENAI_MODEL as in examples/demo.ts) a real model does, streamed.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { build } from 'esbuild';
import { z } from 'zod';
import {
  type AgentState,
  createAgent,
  type Driver,
  defineTool,
  ExecutionBudget,
  modelDriver,
  type SessionStore,
  SqliteSessionStore,
  scriptedDriver,
} from '../src/index';
import { createChatHandler, type StreamStore, toNodeHandler } from '../src/ui/index';
import { calculator, search } from './support/travel';

export interface ChatAppOptions {
  /** Where chats are kept. Default: a SqliteSessionStore on `dbFile`, closed with the server. */
  readonly store?: SessionStore;
  /** The SQLite file when no store is given. Default: CHAT_DB, or ./.tmp/chat.db. */
  readonly dbFile?: string;
  /** The model. Default: a real one when OPENAI_API_KEY is set, else `typing(chatScript())`. */
  readonly driver?: Driver;
  /**
   * The page's client: `'plain'` (default: `AbstractChat` and the DOM, no React) or `'react'`
   * (`useChat` from `@ai-sdk/react`, examples/react-chat/main.tsx). Run with CHAT_CLIENT=react.
   */
  readonly client?: 'plain' | 'react';
  /** Binds each approval to the exact call (see `approvalSecret`). Default: APPROVAL_SECRET, if set. */
  readonly approvalSecret?: string;
  /**
   * Where the runs' streams are kept: a `RedisStreamStore` shared by several processes serving the
   * app (over one session store) lets a page reloaded against any of them follow the answer.
   * Default: this process's memory.
   */
  readonly streams?: StreamStore;
}

/** A payment: the model may ask for one, a person approves or denies it in the page. */
export const pay = defineTool({
  description: 'Pay someone, in euros. A person approves every payment before it is made.',
  inputSchema: z.object({ to: z.string().min(1), amount: z.number().positive() }),
  needsApproval: true,
  execute: async ({ to, amount }, { toolCallId }) => ({
    paid: amount,
    to,
    reference: `PAY-${toolCallId.slice(-6)}`,
  }),
});

export function createChatApp(options: ChatAppOptions = {}): Server {
  const store = options.store ?? openStore(options.dbFile ?? process.env.CHAT_DB ?? '.tmp/chat.db');
  const approvalSecret = options.approvalSecret ?? process.env.APPROVAL_SECRET;
  const agent = createAgent({
    driver: options.driver ?? defaultDriver(),
    systemPrompt:
      'You are a travel assistant. Look facts up with search; use the calculator for sums; pay with pay (a person approves it).',
    tools: { search, calculator, pay },
    budget: new ExecutionBudget({ maxSteps: 8, maxTokens: 20_000, maxSeconds: 120 }),
    store,
    ...(approvalSecret && { approvalSecret }),
  });
  const chat = toNodeHandler(
    createChatHandler({ agent, ...(options.streams && { streams: options.streams }) }),
  );
  const client = options.client ?? 'plain';
  let script: Promise<string> | undefined;

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => {
      console.error(error);
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      res.end('The page could not be served.');
    });
  });
  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path === '/api/chat' || path.startsWith('/api/chat/')) return chat(req, res);
    if (req.method !== 'GET') {
      res.writeHead(405, { allow: 'GET', 'content-type': 'text/plain; charset=utf-8' });
      res.end('Use GET for pages; the chat API is at /api/chat.');
      return;
    }
    if (path === '/') return send(res, 'text/html; charset=utf-8', client === 'react' ? REACT_PAGE : PAGE);
    if (path === '/favicon.ico') {
      res.writeHead(204);
      res.end();
      return;
    }
    if (path === '/chat.js') {
      script ??= bundleClient(client);
      return send(res, 'text/javascript; charset=utf-8', await script);
    }
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(`No page ${path}: open / for the chat.`);
  }
  if (!options.store) {
    server.on('close', () => {
      store.close().catch((error: unknown) => console.error('Closing the session store failed:', error));
    });
  }
  return server;
}

// ---- the scripted model ------------------------------------------------------------------------

const lastUserText = (state: AgentState) =>
  state.messages().findLast((m) => m.role === 'user')?.content ?? '';

/**
 * Two turns (the weather, then a payment that waits for approval), then for any further message a
 * search and an answer built from what it found.
 */
export const chatScript = () =>
  scriptedDriver([
    {
      toolCalls: [{ name: 'search', args: { query: 'Lisbon weather May' } }],
      usage: { inputTokens: 180, outputTokens: 22 },
    },
    {
      text: 'Lisbon is mild in May: highs of 22 °C, lows of 14 °C and about 5 rainy days.',
      usage: { inputTokens: 240, outputTokens: 30 },
    },
    {
      text: 'I will pay the deposit once you approve it.',
      toolCalls: [{ name: 'pay', args: { to: 'Hotel Lisboa', amount: 95 } }],
      usage: { inputTokens: 290, outputTokens: 21 },
    },
    (state) => {
      const result = state.messages().findLast((m) => m.role === 'tool');
      return {
        text: result?.isError
          ? 'The deposit was not paid.'
          : 'Paid: €95 to Hotel Lisboa. Your room is held for May.',
        usage: { inputTokens: 350, outputTokens: 19 },
      };
    },
    (state) =>
      state.messages().at(-1)?.role === 'tool'
        ? {
            text: `(scripted) Found: ${state.messages().at(-1)?.content}. Set OPENAI_API_KEY for a real model.`,
            usage: { inputTokens: 300, outputTokens: 25 },
          }
        : {
            toolCalls: [{ name: 'search', args: { query: lastUserText(state) || 'Lisbon' } }],
            usage: { inputTokens: 280, outputTokens: 12 },
          },
  ]);

/** The driver's answers with their text reported word by word, as a streaming model sends it. */
export function typing(driver: Driver): Driver {
  return {
    name: `typing(${driver.name})`,
    async infer(state, context) {
      const answered = await driver.infer(state, context);
      const text = answered.currentStep()?.outputText() ?? '';
      const ids = {
        agentId: state.agentId(),
        parentAgentId: state.parentAgentId(),
        executionId: state.executionId() ?? '',
        stepNumber: state.stepCount() + 1,
      };
      for (const delta of text.match(/\S+\s*/g) ?? []) context.report({ type: 'text.delta', ...ids, delta });
      return answered;
    },
  };
}

function defaultDriver(): Driver {
  const apiKey = process.env.OPENAI_API_KEY;
  if (!apiKey) return typing(chatScript());
  const provider = createOpenAICompatible({
    name: 'openai',
    baseURL: process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
    apiKey,
    includeUsage: true,
  });
  return modelDriver(provider.chatModel(process.env.OPENAI_MODEL ?? 'gpt-4o-mini'), { stream: true });
}

// ---- the page ----------------------------------------------------------------------------------

/**
 * The page's script, bundled with the AI SDK's chat client in it: chat-page/client.ts, or
 * react-chat/main.tsx with React and `@ai-sdk/react`.
 */
async function bundleClient(client: 'plain' | 'react'): Promise<string> {
  const entry = client === 'react' ? './react-chat/main.tsx' : './chat-page/client.ts';
  const result = await build({
    entryPoints: [fileURLToPath(new URL(entry, import.meta.url))],
    jsx: 'automatic',
    define: { 'process.env.NODE_ENV': '"production"' },
    bundle: true,
    write: false,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  return result.outputFiles[0]?.text ?? '';
}

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>agent-machine chat</title>
<style>
  body { font: 15px/1.45 system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1d232b; }
  main { max-width: 720px; margin: 0 auto; padding: 16px; display: flex; flex-direction: column; min-height: 100vh; box-sizing: border-box; }
  header { display: flex; justify-content: space-between; align-items: baseline; }
  h1 { font-size: 17px; margin: 0 0 8px; }
  #status { font-size: 12px; color: #5b6573; }
  #messages { list-style: none; padding: 0; margin: 0; flex: 1; }
  li { margin: 8px 0; padding: 8px 12px; border-radius: 10px; max-width: 85%; }
  li.user { background: #2f6fed; color: white; margin-left: auto; }
  li.assistant { background: white; border: 1px solid #dde1e7; }
  p.text { margin: 4px 0; white-space: pre-wrap; }
  .tool { font-size: 13px; background: #f1f3f6; border-radius: 6px; padding: 6px 8px; margin: 6px 0; }
  .tool pre { margin: 4px 0 0; white-space: pre-wrap; }
  .tool .error, .tool .denied { color: #b3261e; }
  .tool .running { color: #8a5a00; margin-left: 6px; }
  .approval { display: block; margin-top: 6px; color: #8a5a00; }
  .approval button { margin-left: 6px; }
  .subagent { font-size: 12px; color: #5b6573; }
  form { display: flex; gap: 8px; margin-top: 12px; }
  #text { flex: 1; padding: 8px; border: 1px solid #c8ced6; border-radius: 8px; font: inherit; }
  button { padding: 6px 12px; border-radius: 8px; border: 1px solid #c8ced6; background: white; font: inherit; cursor: pointer; }
  button.approve { background: #1f7a3a; color: white; border-color: #1f7a3a; }
</style>
</head>
<body>
<main>
  <header><h1>agent-machine chat</h1><span id="status" data-status="ready">loading…</span></header>
  <ol id="messages"></ol>
  <form id="composer"><input id="text" autocomplete="off" placeholder="Ask about Lisbon, or pay the hotel deposit"><button id="send">Send</button><button id="stop" type="button" hidden>Stop</button></form>
</main>
<script type="module" src="/chat.js"></script>
</body>
</html>
`;

/** The React page: the same styles, the markup is React's (examples/react-chat/main.tsx). */
const REACT_PAGE = PAGE.replace(/<main>[\s\S]*<\/main>/, '<div id="root"></div>');

// ---- HTTP plumbing -----------------------------------------------------------------------------

function openStore(file: string): SessionStore {
  mkdirSync(dirname(file), { recursive: true });
  return new SqliteSessionStore(file);
}

function send(res: ServerResponse, type: string, body: string): void {
  res.writeHead(200, {
    'content-type': type,
    // The page runs only its own script, and talks only to this server.
    'content-security-policy': "default-src 'self'; style-src 'unsafe-inline'; script-src 'self'",
    'cache-control': 'no-cache',
  });
  res.end(body);
}

// Run directly: listen on 127.0.0.1:PORT (0: any free port) until Ctrl-C.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const server = createChatApp({ client: process.env.CHAT_CLIENT === 'react' ? 'react' : 'plain' });
  server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    console.log(`Chat on http://127.0.0.1:${port} (the API: POST /api/chat, GET /api/chat/:id/stream)`);
  });
  process.once('SIGINT', () => {
    server.close();
    server.closeAllConnections();
  });
}
