/**
 * A small OpenAI-compatible chat-completions server on 127.0.0.1 for end-to-end tests: it plays
 * scripted replies (as JSON, or as SSE when the request asks for `stream: true`), with tool calls
 * and usage, and failure modes (HTTP errors, a malformed body, an error in a stream, a reply that
 * never comes). It records every request it received.
 *
 * @example
 * const server = await startOpenAIServer([toolCallReply([{ id: 'c1', name: 'add', arguments: { a: 2, b: 3 } }]), textReply('5')]);
 * const model = createOpenAICompatible({ name: 'local', baseURL: server.baseURL }).chatModel('m');
 * // ... run an agent ...
 * server.requests[1].body.messages; // what the model was sent
 * await server.close();
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { afterEach } from 'vitest';

export interface ScriptedToolCall {
  readonly id: string;
  readonly name: string;
  /** An object is sent as its JSON; a string is sent as it is (so it may be broken JSON). */
  readonly arguments: string | Readonly<Record<string, unknown>>;
}

export interface ScriptedUsage {
  readonly prompt: number;
  readonly completion: number;
}

/** One scripted answer to one request. */
export type Reply =
  | {
      readonly type: 'message';
      readonly content?: string;
      readonly toolCalls?: readonly ScriptedToolCall[];
      /** Default: 'tool_calls' with tool calls, else 'stop'. */
      readonly finishReason?: string;
      readonly usage?: ScriptedUsage;
    }
  /** An HTTP error with an OpenAI-style JSON body `{"error": {"message": ...}}`. */
  | {
      readonly type: 'error';
      readonly status: number;
      readonly message: string;
      readonly headers?: Readonly<Record<string, string>>;
      /** The body's `error.code` (OpenAI's `context_length_exceeded`, ...); default the status. */
      readonly code?: string;
    }
  /** A body sent verbatim (e.g. malformed JSON). */
  | { readonly type: 'raw'; readonly status?: number; readonly body: string; readonly contentType?: string }
  /** An SSE stream that sends `content` and then an error chunk `{"error": {"message": ...}}`. */
  | { readonly type: 'stream-error'; readonly content?: string; readonly message: string }
  /** Never answers: the connection stays open until the client closes it (or the server stops). */
  | { readonly type: 'hang' };

export const textReply = (content: string, usage: ScriptedUsage = { prompt: 20, completion: 2 }): Reply => ({
  type: 'message',
  content,
  usage,
});

export const toolCallReply = (
  toolCalls: readonly ScriptedToolCall[],
  options: { content?: string; usage?: ScriptedUsage } = {},
): Reply => ({
  type: 'message',
  toolCalls,
  usage: options.usage ?? { prompt: 10, completion: 5 },
  ...options,
});

export interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  /** The parsed JSON body (the raw text if it was not JSON). */
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary fields of the request body
  readonly body: any;
}

export interface OpenAIServer {
  /** `http://127.0.0.1:<port>/v1`: give it to createOpenAICompatible as `baseURL`. */
  readonly baseURL: string;
  /** Every request received, in order. */
  readonly requests: readonly RecordedRequest[];
  /** How many `hang` replies saw their connection closed by the client before answering. */
  readonly clientDisconnects: number;
  /** Resolves once `count` requests have arrived. */
  waitForRequests(count: number): Promise<void>;
  /** Resolves once a `hang` reply's connection has been closed by the client. */
  waitForClientDisconnect(): Promise<void>;
  close(): Promise<void>;
}

type Script = readonly Reply[] | ((request: RecordedRequest, index: number) => Reply);

/**
 * Starts the server on 127.0.0.1 (a free port). A list of replies is played in order; once it is
 * used up the last reply repeats (so `[error500]` fails forever).
 */
export async function startOpenAIServer(script: Script): Promise<OpenAIServer> {
  const requests: RecordedRequest[] = [];
  let clientDisconnects = 0;
  let closing = false;
  const requestWaiters: Array<{ count: number; resolve: () => void }> = [];
  const disconnectWaiters: Array<() => void> = [];

  const replyFor = (request: RecordedRequest, index: number): Reply => {
    if (typeof script === 'function') return script(request, index);
    const reply = script[Math.min(index, script.length - 1)];
    if (!reply) throw new Error('startOpenAIServer needs at least one reply');
    return reply;
  };

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      // A bug in a scripted reply function: the client sees it as a 500 naming the error.
      if (!res.headersSent) sendJson(res, 500, { error: { message: `Test server error: ${String(error)}` } });
      else res.destroy(error as Error);
    });
  });

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const text = await readBody(req);
    const request: RecordedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body: parseJson(text),
    };
    const index = requests.push(request) - 1;
    for (const waiter of requestWaiters.filter((w) => requests.length >= w.count)) {
      requestWaiters.splice(requestWaiters.indexOf(waiter), 1);
      waiter.resolve();
    }
    if (req.method !== 'POST' || !request.path.endsWith('/chat/completions')) {
      return sendJson(res, 404, { error: { message: `No route for ${req.method} ${request.path}` } });
    }
    const reply = replyFor(request, index);
    const model = typeof request.body?.model === 'string' ? request.body.model : 'm';
    switch (reply.type) {
      case 'message':
        if (request.body?.stream === true) return sendStream(res, model, reply);
        return sendJson(res, 200, completion(model, reply));
      case 'error':
        return sendJson(
          res,
          reply.status,
          { error: { message: reply.message, type: 'scripted_error', code: reply.code ?? reply.status } },
          reply.headers,
        );
      case 'raw':
        res.writeHead(reply.status ?? 200, { 'content-type': reply.contentType ?? 'application/json' });
        res.end(reply.body);
        return;
      case 'stream-error':
        startSse(res);
        if (reply.content) sse(res, chunk(model, { content: reply.content }, null));
        sse(res, { error: { message: reply.message, type: 'server_error' } });
        res.end();
        return;
      case 'hang':
        res.on('close', () => {
          if (res.writableEnded || closing) return;
          clientDisconnects++;
          for (const resolve of disconnectWaiters.splice(0)) resolve();
        });
        return;
    }
  };

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    // Loopback only: tests never open a port to the network.
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    get clientDisconnects() {
      return clientDisconnects;
    },
    waitForRequests(count) {
      if (requests.length >= count) return Promise.resolve();
      return new Promise((resolve) => requestWaiters.push({ count, resolve }));
    },
    waitForClientDisconnect() {
      if (clientDisconnects > 0) return Promise.resolve();
      return new Promise((resolve) => disconnectWaiters.push(resolve));
    },
    close() {
      closing = true;
      return new Promise((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Hanging replies and keep-alive sockets would hold close() open.
        server.closeAllConnections();
      });
    },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

type MessageReply = Extract<Reply, { type: 'message' }>;

const argumentsText = (call: ScriptedToolCall) =>
  typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
const finishReasonOf = (reply: MessageReply) =>
  reply.finishReason ?? (reply.toolCalls?.length ? 'tool_calls' : 'stop');
const usageOf = (reply: MessageReply) =>
  reply.usage
    ? {
        prompt_tokens: reply.usage.prompt,
        completion_tokens: reply.usage.completion,
        total_tokens: reply.usage.prompt + reply.usage.completion,
      }
    : undefined;

function completion(model: string, reply: MessageReply) {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.content ?? null,
          ...(reply.toolCalls?.length
            ? {
                tool_calls: reply.toolCalls.map((c) => ({
                  id: c.id,
                  type: 'function',
                  function: { name: c.name, arguments: argumentsText(c) },
                })),
              }
            : {}),
        },
        finish_reason: finishReasonOf(reply),
      },
    ],
    usage: usageOf(reply),
  };
}

function chunk(model: string, delta: Record<string, unknown>, finishReason: string | null) {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

function startSse(res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
}

function sse(res: ServerResponse, data: unknown): void {
  res.write(`data: ${JSON.stringify(data)}\n\n`);
}

/** The reply as SSE chunks: text in 4-character deltas, each tool call's arguments in two halves. */
function sendStream(res: ServerResponse, model: string, reply: MessageReply): void {
  startSse(res);
  sse(res, chunk(model, { role: 'assistant', content: '' }, null));
  const content = reply.content ?? '';
  for (let i = 0; i < content.length; i += 4)
    sse(res, chunk(model, { content: content.slice(i, i + 4) }, null));
  (reply.toolCalls ?? []).forEach((call, index) => {
    const args = argumentsText(call);
    const half = Math.ceil(args.length / 2);
    sse(
      res,
      chunk(
        model,
        {
          tool_calls: [
            {
              index,
              id: call.id,
              type: 'function',
              function: { name: call.name, arguments: args.slice(0, half) },
            },
          ],
        },
        null,
      ),
    );
    sse(res, chunk(model, { tool_calls: [{ index, function: { arguments: args.slice(half) } }] }, null));
  });
  sse(res, chunk(model, {}, finishReasonOf(reply)));
  const usage = usageOf(reply);
  if (usage) sse(res, { ...chunk(model, {}, null), choices: [], usage });
  res.write('data: [DONE]\n\n');
  res.end();
}

/**
 * For a test file: `start(script)` starts a server (one at a time), closed after each test.
 *
 * @example
 * const start = serverPerTest();
 * const server = await start([textReply('hi')]);
 */
export function serverPerTest(): (script: Script) => Promise<OpenAIServer> {
  let server: OpenAIServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });
  return async (script) => {
    server = await startOpenAIServer(script);
    return server;
  };
}

/** The AI SDK's OpenAI-compatible chat model `m`, talking to `server`. */
export function localModel(server: OpenAIServer) {
  return createOpenAICompatible({ name: 'local', baseURL: server.baseURL }).chatModel('m');
}
