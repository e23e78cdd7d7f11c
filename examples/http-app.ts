/**
 * npx tsx examples/http-app.ts     (listens on http://127.0.0.1:3000; set PORT to change it)
 *
 * A chat app over plain node:http. Each session is a conversation kept in SQLite (CHAT_DB, default
 * ./.tmp/chat.db); each message runs one execution of the agent, whose events stream back as
 * Server-Sent Events, the answer last:
 *
 *   curl -N http://127.0.0.1:3000/chat/trip-1 -H 'content-type: application/json' \
 *        -d '{"message": "What is the weather in Lisbon in May?"}'
 *   curl http://127.0.0.1:3000/sessions/trip-1
 *
 * Offline a scripted model answers. With OPENAI_API_KEY set (OPENAI_BASE_URL and OPENAI_MODEL as in
 * examples/demo.ts) a real model does, its text streamed as `text.delta` events.
 */
import { mkdirSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { AnyActorRef, InspectionEvent } from 'xstate';
import { z } from 'zod';
import {
  type AgentEvent,
  AgentMachineError,
  AgentState,
  assertSessionId,
  createAgent,
  type Driver,
  ExecutionBudget,
  InvalidSessionIdError,
  modelDriver,
  SessionConflictError,
  type SessionStore,
  SqliteSessionStore,
  scriptedDriver,
} from '../src/index';
import { calculator, search } from './support/travel';

export interface ChatServerOptions {
  /** Where sessions are kept. Default: a SqliteSessionStore on `dbFile`, closed with the server. */
  readonly store?: SessionStore;
  /** The SQLite file when no store is given. Default: CHAT_DB, or ./.tmp/chat.db. */
  readonly dbFile?: string;
  /** The model. Default: a real one when OPENAI_API_KEY is set, else the scripted one below. */
  readonly driver?: Driver;
}

/** The agent events a client receives, under their own names; `answer` (or `failure`) comes last. */
export const STREAMED_EVENTS: ReadonlySet<string> = new Set([
  'step.started',
  'tool.started',
  'tool.finished',
  'step.finished',
  'text.delta',
  'execution.finished',
]);

/** A request the app refuses: the status and a JSON body `{ error: { code, message } }`. */
export class HttpError extends Error {
  override readonly name = 'HttpError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export function createChatServer(options: ChatServerOptions = {}): Server {
  const store = options.store ?? openStore(options.dbFile ?? process.env.CHAT_DB ?? '.tmp/chat.db');
  const agent = createAgent({
    driver: options.driver ?? defaultDriver(),
    systemPrompt: 'You are a travel assistant. Look facts up with search; use the calculator for sums.',
    tools: { search, calculator },
    budget: new ExecutionBudget({ maxSteps: 8, maxTokens: 20_000, maxSeconds: 60 }),
    store,
  });
  const answering = new Set<string>(); // sessions running an execution in this process

  async function chat(req: IncomingMessage, res: ServerResponse, sessionId: string): Promise<void> {
    assertSessionId(sessionId); // InvalidSessionIdError -> 400
    const message = parseChatRequest(await readBody(req)).message;
    if (answering.has(sessionId)) {
      throw new HttpError(409, 'SESSION_BUSY', `Session "${sessionId}" is still answering; wait for it.`);
    }
    answering.add(sessionId);
    try {
      const stored = await store.load(sessionId);
      // The conversation so far (its last execution closed), and the new message.
      const state = (stored?.state.forNextExecution() ?? AgentState.empty()).withUserMessage(message);
      const stream = eventStream(res);
      // Every agent actor (this one, and any subagent's) is announced to `inspect` when created.
      const inspect = (event: InspectionEvent) => {
        if (event.type !== '@xstate.actor') return;
        (event.actorRef as AnyActorRef).on('*', (e: AgentEvent) => {
          if (STREAMED_EVENTS.has(e.type)) stream.send(e.type, e);
        });
      };
      const disconnected = new AbortController(); // a client that goes away stops the run
      res.on('close', () => {
        if (!res.writableFinished) disconnected.abort(new Error('The client disconnected'));
      });
      const done = await agent.execute(state, { sessionId, inspect, signal: disconnected.signal });
      stream.send('answer', {
        sessionId,
        status: done.status(),
        stopReason: done.stopReason(),
        answer: done.finalResponse(),
        steps: done.stepCount(),
        usage: done.usage(),
        errors: done.errors(),
      });
      res.end();
    } finally {
      answering.delete(sessionId);
    }
  }

  async function session(res: ServerResponse, sessionId: string): Promise<void> {
    const stored = await store.load(sessionId); // an invalid id throws InvalidSessionIdError
    if (!stored) throw new HttpError(404, 'SESSION_NOT_FOUND', `No session "${sessionId}".`);
    const { state } = stored;
    sendJson(res, 200, {
      sessionId,
      version: stored.version,
      status: state.status(),
      stopReason: state.stopReason(),
      executions: state.executionCount(),
      steps: state.stepCount(), // of the last execution, as is usage
      usage: state.usage(),
      messages: state.messages().map((m) => ({
        role: m.role,
        content: m.content,
        ...(m.toolCalls?.length ? { toolCalls: m.toolCalls.map(({ name, args }) => ({ name, args })) } : {}),
      })),
    });
  }

  const server = createServer((req, res) => {
    route(req, res).catch((error: unknown) => sendError(res, error));
  });
  async function route(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const [, resource, id, ...rest] = path.split('/');
    const method = resource === 'chat' ? 'POST' : resource === 'sessions' ? 'GET' : undefined;
    if (!method || id === undefined || rest.length > 0) {
      throw new HttpError(
        404,
        'NOT_FOUND',
        `No route ${path}: use POST /chat/:sessionId or GET /sessions/:sessionId.`,
      );
    }
    if (req.method !== method) {
      res.setHeader('allow', method);
      throw new HttpError(405, 'METHOD_NOT_ALLOWED', `Use ${method} /${resource}/:sessionId.`);
    }
    const sessionId = decodePathSegment(id);
    return resource === 'chat' ? chat(req, res, sessionId) : session(res, sessionId);
  }
  if (!options.store) {
    server.on('close', () => {
      store.close().catch((error: unknown) => console.error('Closing the session store failed:', error));
    });
  }
  return server;
}

// ---- the scripted model ------------------------------------------------------------------------

/** Two turns of a conversation, then an echo for any further message. */
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
      toolCalls: [{ name: 'search', args: { query: 'Lisbon hotel price' } }],
      usage: { inputTokens: 290, outputTokens: 21 },
    },
    {
      toolCalls: [{ name: 'calculator', args: { expression: '3 * 95' } }],
      usage: { inputTokens: 350, outputTokens: 19 },
    },
    {
      text: 'About €285: 3 nights at €95 in a mid-range hotel.',
      usage: { inputTokens: 380, outputTokens: 18 },
    },
    (state) => ({
      text: `(scripted) You said: "${state.messages().findLast((m) => m.role === 'user')?.content}". Set OPENAI_API_KEY for a real model.`,
    }),
  ]);

function defaultDriver(): Driver {
  const apiKey = process.env.OPENAI_API_KEY;
  if (!apiKey) return chatScript();
  const provider = createOpenAICompatible({
    name: 'openai',
    baseURL: process.env.OPENAI_BASE_URL ?? 'https://api.openai.com/v1',
    apiKey,
    includeUsage: true,
  });
  return modelDriver(provider.chatModel(process.env.OPENAI_MODEL ?? 'gpt-4o-mini'), { stream: true });
}

// ---- HTTP plumbing -----------------------------------------------------------------------------

function openStore(file: string): SessionStore {
  mkdirSync(dirname(file), { recursive: true });
  return new SqliteSessionStore(file);
}

const chatRequest = z.object({
  message: z.string({ error: '"message" must be a string' }).trim().min(1, '"message" must not be empty'),
});

function parseChatRequest(body: string): z.output<typeof chatRequest> {
  let data: unknown;
  try {
    data = JSON.parse(body);
  } catch (error) {
    throw new HttpError(
      400,
      'INVALID_JSON',
      `The body is not JSON (${(error as Error).message}); send {"message": "..."}.`,
    );
  }
  const parsed = chatRequest.safeParse(data);
  if (!parsed.success) {
    throw new HttpError(
      400,
      'INVALID_REQUEST',
      `${parsed.error.issues.map((i) => i.message).join('; ')}: send {"message": "..."}.`,
    );
  }
  return parsed.data;
}

const MAX_BODY_BYTES = 64 * 1024;

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES)
      throw new HttpError(413, 'BODY_TOO_LARGE', `The body is over ${MAX_BODY_BYTES} bytes.`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new HttpError(400, 'INVALID_SESSION_ID', `The session id "${segment}" is not valid URL encoding.`);
  }
}

/** SSE on `res`; the headers go out with the first event, so errors before it still get a JSON status. */
function eventStream(res: ServerResponse) {
  return {
    send(event: string, data: unknown) {
      if (res.destroyed) return; // the client went away; the run is being stopped
      if (!res.headersSent) {
        res.writeHead(200, {
          'content-type': 'text/event-stream; charset=utf-8',
          'cache-control': 'no-cache',
        });
      }
      res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    },
  };
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

function sendError(res: ServerResponse, error: unknown): void {
  const status = statusOf(error);
  if (status >= 500) console.error(error);
  const code = error instanceof HttpError || error instanceof AgentMachineError ? error.code : 'INTERNAL';
  const message = error instanceof Error ? error.message : String(error);
  if (res.headersSent) {
    // Mid-stream: the client learns it from a last event.
    if (!res.writableEnded) res.end(`event: failure\ndata: ${JSON.stringify({ code, message })}\n\n`);
    return;
  }
  sendJson(res, status, { error: { code, message } });
}

function statusOf(error: unknown): number {
  if (error instanceof HttpError) return error.status;
  if (error instanceof InvalidSessionIdError) return 400;
  if (error instanceof SessionConflictError) return 409; // another request saved the session first
  return 500;
}

// Run directly: listen on 127.0.0.1:PORT (0: any free port) until Ctrl-C.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const server = createChatServer();
  server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    console.log(`Chat server on http://127.0.0.1:${port} (POST /chat/:sessionId, GET /sessions/:sessionId)`);
  });
  process.once('SIGINT', () => {
    server.close();
    server.closeAllConnections();
  });
}
