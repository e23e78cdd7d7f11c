import { toUIMessages } from '../messages/ui-messages';
import { assertSessionId } from '../persistence/session-id';
import type { SessionStore } from '../persistence/session-store';
import { ApprovalError } from '../state/approval-error';
import { AgentMachineError, InvalidArgumentError } from '../state/errors';
import { UI_MESSAGE_STREAM_HEADERS, type UIMessageChunk } from '../ui/ui-message';
import { fromQueuedAnswer } from './chat-queue';
import { type ChatRequest, ChatRequestError, parseChatRequest } from './chat-request';
import { noChunks } from './running-actor';
import type { StreamStore } from './stream-store';

/** What a request does to a chat: read it (its stream, its messages), send a message, decide approvals, stop it. */
export type ChatAction = 'read' | 'write' | 'decide' | 'stop';

/** What `authorize` is asked about: the chat a request is for, and what it does to it. */
export interface ChatAccess {
  readonly chatId: string;
  readonly action: ChatAction;
}

/** A Web-standard request handler: Next.js route handlers, Hono, Bun, Deno, or node:http via `toNodeHandler`. */
export type ChatHandler = (request: Request) => Promise<Response>;

/** What the routes every chat handler serves need: the part that starts a run is `post`. */
/** Maps a chat request (authorized) to the budget ledger scopes its run charges. */
export type LedgerScopesOf = (
  request: Request,
  chatId: string,
) => readonly string[] | Promise<readonly string[]>;

export interface ChatRoutes {
  readonly store: SessionStore;
  readonly streams: StreamStore;
  readonly authorize?: (request: Request, access: ChatAccess) => boolean | Promise<boolean>;
  readonly maxBodyBytes: number;
  readonly onError: (error: unknown) => void;
  /** Answers a chat request that was read, checked and authorized (`chatId` is a valid session id). */
  readonly post: (chat: ChatRequest, request: Request) => Promise<Response>;
  /** How a run's stream is read back from `streams` for the client that sent `request` (default: as written). */
  readonly readBack?: (
    chunks: AsyncIterable<UIMessageChunk>,
    request: Request,
  ) => AsyncIterable<UIMessageChunk>;
}

/**
 * The HTTP side of a chat handler: `POST <api>` (read, checked, authorized, then `post`),
 * `POST <api>/<id>/stop`, `GET <api>/<id>/stream`, `GET <api>/<id>/messages`, and the refusals
 * (`{ error: { code, message } }` with the code's status).
 */
export function chatRoutes(routes: ChatRoutes): ChatHandler {
  const { store, streams, onError } = routes;
  const readBack = routes.readBack ?? ((chunks) => chunks);

  async function allow(request: Request, chatId: string, action: ChatAction): Promise<void> {
    if (!routes.authorize || (await routes.authorize(request, { chatId, action })) === true) return;
    throw new ChatRequestError('FORBIDDEN', `This request may not ${action} chat "${chatId}".`);
  }

  async function post(request: Request): Promise<Response> {
    requireJson(request);
    const chat = parseChatRequest(await readText(request, routes.maxBodyBytes));
    const chatId = assertSessionId(chat.chatId);
    await allow(request, chatId, chat.kind === 'message' ? 'write' : 'decide');
    return routes.post({ ...chat, chatId }, request);
  }

  async function stopRun(request: Request, chatId: string): Promise<Response> {
    requireJson(request);
    await allow(request, chatId, 'stop');
    const running = await streams.requestStop(chatId);
    return Response.json({ id: chatId, stopping: running }, { status: 202 });
  }

  async function get(request: Request): Promise<Response> {
    const segments = new URL(request.url).pathname.split('/');
    const [id, resource] = segments.slice(-2);
    if (resource !== 'stream' && resource !== 'messages') {
      throw new ChatRequestError(
        'NOT_FOUND',
        'Use GET <api>/<chat id>/stream or GET <api>/<chat id>/messages.',
      );
    }
    const chatId = assertSessionId(decodeSegment(id ?? ''));
    await allow(request, chatId, 'read');
    if (resource === 'messages') {
      const stored = await store.load(chatId);
      return Response.json({ id: chatId, messages: stored ? toUIMessages(stored.state) : [] });
    }
    const read = new AbortController();
    const chunks = await streams.read(chatId, { signal: read.signal });
    if (!chunks) return new Response(null, { status: 204 });
    return streamResponse(readBack(chunks, request), () => read.abort());
  }

  return async (request) => {
    try {
      if (request.method === 'POST') {
        const [id, resource] = new URL(request.url).pathname.split('/').slice(-2);
        if (resource === 'stop') return await stopRun(request, assertSessionId(decodeSegment(id ?? '')));
        return await post(request);
      }
      if (request.method === 'GET') return await get(request);
      const refused = new ChatRequestError(
        'METHOD_NOT_ALLOWED',
        `Use POST to chat, GET to read; not ${request.method}.`,
      );
      return errorResponse(refused, { allow: 'GET, POST' });
    } catch (error) {
      if (error instanceof AgentMachineError && Object.hasOwn(STATUS, error.code))
        return errorResponse(error);
      onError(error);
      return errorResponse(new ChatRequestError('INTERNAL', 'The chat could not be answered.'));
    }
  };
}

/** The 409 for a message to a chat that answers. */
export function sessionBusy(chatId: string): ChatRequestError {
  return new ChatRequestError(
    'SESSION_BUSY',
    `Chat "${chatId}" is still answering; wait for it to finish (or stop it: POST <api>/${chatId}/stop).`,
  );
}

/**
 * The answer to a message steered or queued into the chat's running stream: the stream from its
 * start (an empty one if the run has just ended), or from the answer to the message queued as
 * `queueId` on; read back through `readBack` (default: as written).
 */
export async function relayRunning(
  streams: StreamStore,
  chatId: string,
  queueId: string | undefined,
  readBack: (chunks: AsyncIterable<UIMessageChunk>) => AsyncIterable<UIMessageChunk> = (chunks) => chunks,
): Promise<Response> {
  const read = new AbortController();
  const all = readBack((await streams.read(chatId, { signal: read.signal })) ?? noChunks());
  const chunks = queueId === undefined ? all : fromQueuedAnswer(all, queueId);
  return streamResponse(chunks, () => read.abort());
}

/** A chunk stream as a UI message stream response; `cancel` runs when the client leaves. */
export function streamResponse(chunks: AsyncIterable<UIMessageChunk>, cancel: () => void): Response {
  return new Response(sse(chunks, cancel), { headers: UI_MESSAGE_STREAM_HEADERS });
}

/** A chunk stream as Server-Sent Events (the UI message stream protocol); `cancel` runs when the client leaves. */
function sse(chunks: AsyncIterable<UIMessageChunk>, cancel: () => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  const iterator = chunks[Symbol.asyncIterator]();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await iterator.next();
      if (done) {
        controller.enqueue(encoder.encode('data: [DONE]\n\n'));
        controller.close();
      } else controller.enqueue(encoder.encode(`data: ${JSON.stringify(value)}\n\n`));
    },
    cancel() {
      cancel();
      void iterator.return?.();
    },
  });
}

/**
 * Only JSON is taken: a cross-site HTML form can post only form encodings and plain text without
 * the browser asking the server first, so it cannot post to a chat.
 */
function requireJson(request: Request): void {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase();
  if (type === 'application/json') return;
  throw new ChatRequestError(
    'UNSUPPORTED_MEDIA_TYPE',
    `The body must be sent as application/json (the AI SDK's chat transport does), not ${
      type ? JSON.stringify(type) : 'without a content type'
    }.`,
  );
}

/** The body as text, read no further than `maxBytes` (a client may send no content-length). */
async function readText(request: Request, maxBytes: number): Promise<string> {
  const tooLarge = () =>
    new ChatRequestError('BODY_TOO_LARGE', `The body is over ${maxBytes} bytes (maxBodyBytes).`);
  if (Number(request.headers.get('content-length') ?? 0) > maxBytes) throw tooLarge();
  if (!request.body) return '';
  const decoder = new TextDecoder();
  let text = '';
  let size = 0;
  const reader = request.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return text + decoder.decode();
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge();
    }
    text += decoder.decode(value, { stream: true });
  }
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ChatRequestError('INVALID_SESSION_ID', `The chat id "${segment}" is not valid URL encoding.`);
  }
}

/**
 * The HTTP status of each error a chat request is refused with. An error with any other code is the
 * server's (500, INTERNAL): it goes to `onError` and its message is not sent.
 */
const STATUS: Readonly<Record<string, number>> = {
  INVALID_JSON: 400,
  INVALID_REQUEST: 400,
  REGENERATE_UNSUPPORTED: 400,
  EDIT_UNSUPPORTED: 400,
  EMPTY_MESSAGE: 400,
  NOTHING_TO_ANSWER: 400,
  INVALID_SESSION_ID: 400,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  SESSION_NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  SESSION_BUSY: 409,
  APPROVAL_PENDING: 409,
  APPROVAL_NOT_PENDING: 409,
  APPROVAL_AMBIGUOUS: 409,
  APPROVAL_INVALID_EDIT: 409,
  APPROVAL_SIGNATURE_INVALID: 409,
  BODY_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  INTERNAL: 500,
};

/** `{ error: { code, message, ...details } }` with the code's status (`pendingApprovals` for APPROVAL_PENDING). */
function errorResponse(error: AgentMachineError, headers: Record<string, string> = {}): Response {
  const details =
    error instanceof ChatRequestError
      ? error.details
      : error instanceof ApprovalError && error.code === 'APPROVAL_PENDING'
        ? { pendingApprovals: error.pendingApprovals }
        : undefined;
  return Response.json(
    { error: Object.assign({ code: error.code, message: error.message }, details) },
    { status: STATUS[error.code] ?? 500, headers },
  );
}

/** What a chat handler does with a message sent while the chat answers (see `ChatHandlerOptions.whileRunning`). */
export type WhileRunning = 'reject' | 'steer' | 'queue';

/** A handler's `whileRunning` option, `'reject'` when left out; anything else is refused. */
export function whileRunningOption(value: WhileRunning | undefined): WhileRunning {
  const whileRunning = value ?? 'reject';
  if (whileRunning !== 'reject' && whileRunning !== 'steer' && whileRunning !== 'queue')
    throw new InvalidArgumentError(
      'whileRunning',
      `${JSON.stringify(whileRunning)} is not 'reject', 'steer' or 'queue'`,
    );
  return whileRunning;
}
