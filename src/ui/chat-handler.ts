import type { InspectionEvent } from 'xstate';
import { toUIMessages } from '../messages/ui-messages';
import { NoSessionStoreError } from '../persistence/errors';
import { assertSessionId } from '../persistence/session-id';
import type { SessionStore } from '../persistence/session-store';
import type { AgentError } from '../state/agent-error';
import { AgentState } from '../state/agent-state';
import { type ApprovalDecision, ApprovalError, type ApprovalInput } from '../state/approval';
import { AgentMachineError, InvalidArgumentError } from '../state/errors';
import type { RunListener } from '../state/event-source';
import { newId } from '../state/ids';
import { Message } from '../state/message';
import { AgentStream } from './agent-stream';
import { chatToolCallId, toApprovalInputs } from './chat-approvals';
import { adoptHandedOff, settleHandedOff } from './chat-handoff';
import { fromQueuedAnswer, nextQueuedExecution } from './chat-queue';
import { type ChatDecision, ChatRequestError, parseChatRequest } from './chat-request';
import { noChunks, type RunningActor, runningActor } from './running-actor';
import { InMemoryStreamStore, type StreamStore } from './stream-store';
import { StreamWriter } from './stream-writer';
import { UI_MESSAGE_STREAM_HEADERS, type UIMessageChunk } from './ui-message';
import { toUIMessageChunks } from './ui-message-chunks';

/**
 * What the chat handler needs of an agent: an `Agent` from `createAgent` is one. Declared here so
 * the UI layer sits below the runtime (which uses its AgentStream for `agent.stream()`).
 */
interface ChatAgent {
  readonly definition: { readonly store?: SessionStore };
  stream(
    state: AgentState,
    options: {
      readonly sessionId: string;
      readonly signal?: AbortSignal;
      readonly inspect?: (event: InspectionEvent) => void;
    },
  ): AgentStream;
  decide(
    sessionId: string,
    decisions: readonly ApprovalInput[],
    options: {
      readonly onEvent: RunListener;
      readonly signal?: AbortSignal;
      readonly inspect?: (event: InspectionEvent) => void;
    },
  ): Promise<AgentState>;
}

/** What a request does to a chat: read it (its stream, its messages), send a message, decide approvals, stop it. */
export type ChatAction = 'read' | 'write' | 'decide' | 'stop';

/** What `authorize` is asked about: the chat a request is for, and what it does to it. */
export interface ChatAccess {
  readonly chatId: string;
  readonly action: ChatAction;
}

export interface ChatHandlerOptions {
  /** The agent that answers; it needs a `store`: the chat id is the session id in it. */
  readonly agent: ChatAgent;
  /**
   * Whether the request (its cookie, its token) may do `action` to chat `chatId`; anything but
   * `true` answers 403 and runs, loads and saves nothing. Asked once per request, after the body
   * is read (the chat id of a POST is in it). Default: every request is allowed.
   */
  readonly authorize?: (request: Request, access: ChatAccess) => boolean | Promise<boolean>;
  /** The text of `error` chunks for a run that fails (default: no details; see UIMessageStreamOptions). */
  readonly errorText?: (error: AgentError) => string;
  /** The largest request body accepted, in bytes (the client sends its whole history). Default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** Gets the errors answered with 500 and the runs that threw. Default: `console.error`. */
  readonly onError?: (error: unknown) => void;
  /**
   * Where each chat's current run keeps its UI message stream: every handler sharing it (and the
   * session store) serves `GET <api>/<id>/stream` from the run's start, stops the run on
   * `POST <api>/<id>/stop` in whichever process runs it, and refuses a second run of the chat.
   * Default: an `InMemoryStreamStore` of this handler (one process); `RedisStreamStore` for many.
   */
  readonly streams?: StreamStore;
  /**
   * What a message sent while the chat answers does, in every handler sharing `streams`:
   * `'reject'` (default) answers 409 SESSION_BUSY; `'steer'` hands it to the running execution,
   * whose model sees it at its next step (one more step if it was giving its final answer; event
   * `message.steered`), and answers the run's stream from its start, as `GET <api>/<id>/stream` does;
   * `'queue'` hands it to the process running the chat, which answers it by the next execution as
   * soon as the running one ends, on the same stream (the POST answers the chat's stream from where
   * that answer starts); a run that is stopped or fails keeps it in the session for the next one.
   */
  readonly whileRunning?: WhileRunning;
  /** How often a run renews its stream's lease while it writes nothing (a long tool call), in ms. Default 10,000. */
  readonly streamRenewMs?: number;
}

/** What a chat handler does with a message sent while the chat answers (see `ChatHandlerOptions.whileRunning`). */
export type WhileRunning = 'reject' | 'steer' | 'queue';

/** A Web-standard request handler: Next.js route handlers, Hono, Bun, Deno, or node:http via `toNodeHandler`. */
export type ChatHandler = (request: Request) => Promise<Response>;

/**
 * The server side of the AI SDK's chat client (`useChat`, `AbstractChat` with
 * `DefaultChatTransport`), over an agent with a session store:
 *
 * - `POST <api>` with the transport's body `{ id, messages, trigger }`: the chat id is the session
 *   id. Only the last message is read: a user message starts the next execution of the stored
 *   conversation; an assistant message carrying approval responses delivers them to the run that
 *   waits. The answer is the UI message stream of the run (see `AgentStream`).
 * - `GET <api>/<id>/stream`: the stream of the run going on for that chat, from its start (a page
 *   that was reloaded picks it up); 204 when none is running.
 * - `GET <api>/<id>/messages`: `{ id, messages }`, the stored conversation as UI messages.
 *
 * A bad request (not JSON, no messages, a bad chat id, approvals for calls that do not wait) gets
 * a 4xx status with `{ error: { code, message } }`, and nothing is run or saved. One run per chat
 * at a time in this handler (409 otherwise); a run goes on when its client goes away.
 *
 * @example
 * const handler = createChatHandler({ agent });
 * export const POST = handler;                              // app/api/chat/route.ts (Next.js)
 * createServer(toNodeHandler(handler)).listen(3000);        // node:http
 */
export function createChatHandler(options: ChatHandlerOptions): ChatHandler {
  const { agent, errorText } = options;
  if (!agent.definition.store) throw new NoSessionStoreError('createChatHandler({ agent })');
  const store: SessionStore = agent.definition.store;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const streams = options.streams ?? new InMemoryStreamStore();
  const renewMs = options.streamRenewMs ?? 10_000;
  const whileRunning = options.whileRunning ?? 'reject';
  if (whileRunning !== 'reject' && whileRunning !== 'steer' && whileRunning !== 'queue')
    throw new InvalidArgumentError(
      'whileRunning',
      `${JSON.stringify(whileRunning)} is not 'reject', 'steer' or 'queue'`,
    );

  async function allow(request: Request, chatId: string, action: ChatAction): Promise<void> {
    if (!options.authorize || (await options.authorize(request, { chatId, action })) === true) return;
    throw new ChatRequestError('FORBIDDEN', `This request may not ${action} chat "${chatId}".`);
  }

  async function post(request: Request): Promise<Response> {
    requireJson(request);
    const chat = parseChatRequest(await readText(request, maxBodyBytes));
    const chatId = assertSessionId(chat.chatId);
    await allow(request, chatId, chat.kind === 'message' ? 'write' : 'decide');
    // One run per chat across every handler sharing `streams`: claiming its stream is the lock.
    const streamId = newId();
    while (!(await streams.begin(chatId, streamId))) {
      // a run goes on: steered into it (if it ended meanwhile, the message starts the next one)
      // (queued: the process running the chat answers it next, on the same stream)
      if (whileRunning !== 'reject' && chat.kind === 'message') {
        const queueId = whileRunning === 'queue' ? newId() : undefined;
        const metadata = queueId ? { queueId } : { steerId: newId() };
        const message = Message.of({ role: 'user', content: chat.text, metadata });
        if (await streams.steer(chatId, message)) return relay(chatId, queueId);
        continue;
      }
      throw new ChatRequestError(
        'SESSION_BUSY',
        `Chat "${chatId}" is still answering; wait for it to finish (or stop it: POST <api>/${chatId}/stop).`,
      );
    }
    const stop = new AbortController();
    const actor = runningActor();
    let stream: AgentStream;
    try {
      await adoptHandedOff(store, streams, chatId, streamId);
      const stored = await store.load(chatId);
      stream =
        chat.kind === 'message'
          ? startMessage(chatId, stored?.state ?? AgentState.empty(), chat.text, stop.signal, actor.inspect)
          : startDecisions(chatId, stored?.state ?? null, chat.decisions, stop.signal, actor.inspect);
    } catch (error) {
      await streams.end(chatId, streamId);
      throw error;
    }
    void publish(stream, chatId, streamId, stop, actor);
    return stream.toUIMessageStreamResponse({ errorText });
  }

  /**
   * Writes the run's UI message stream (as a reader who joins gets it: the whole message, the part
   * before an approval included) to `streams`, stops the run when a stop is asked for anywhere,
   * keeps the stream's lease, and ends the stream with the run; with `whileRunning: 'queue'`, runs
   * the next execution with the messages queued meanwhile first, on the same stream.
   */
  async function publish(
    stream: AgentStream,
    chatId: string,
    streamId: string,
    stop: AbortController,
    actor: RunningActor,
  ) {
    const writer = new StreamWriter(streams, chatId, streamId, { onError });
    const renew = setInterval(
      () => void streams.renew(chatId, streamId).catch((error: unknown) => onError(error)),
      renewMs,
    );
    renew.unref?.();
    let unlisten = () => {};
    let unlistenSteer = () => {};
    const queued: Message[] = [];
    let running = stream;
    let final: AgentState | undefined;
    try {
      unlisten = await streams.onStop(chatId, streamId, () => stop.abort());
      const steer = whileRunning === 'queue' ? (m: Message) => void queued.push(m) : actor.steer;
      unlistenSteer = await streams.onSteer(chatId, streamId, steer);
      for (;;) {
        const reader = running.toUIMessageStream({ errorText, replay: true }).getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          writer.write(value);
        }
        final = await running.state;
        const next = await nextQueuedExecution(store, chatId, final, queued, stop.signal, (state) =>
          agent.stream(state, { sessionId: chatId, signal: stop.signal }),
        );
        if (!next) break;
        writer.write(next.marker);
        running = next.stream;
      }
    } catch (error) {
      onError(error);
    } finally {
      clearInterval(renew);
      unlisten();
      unlistenSteer();
      // a run that threw has been given to onError above (its read or its state)
      if (!final) final = await running.state.catch(() => undefined);
      // queued as the run concluded, or not answered (it stopped or failed): kept for the next one
      if (final) await keepLateSteering(chatId, [...actor.unapplied(final), ...queued.splice(0)]);
      // what the session holds now leaves the stream store; the rest waits for the next run
      await settleHandedOff(store, streams, chatId).catch((error: unknown) => onError(error));
      await writer.end().catch((error: unknown) => onError(error));
    }
  }

  /**
   * Messages steered as the run concluded (after its last save, or once its actor had finished)
   * are saved to the session's steering section: the chat's next execution applies them first.
   */
  async function keepLateSteering(chatId: string, late: readonly Message[]): Promise<void> {
    if (late.length === 0) return;
    try {
      const stored = await store.load(chatId);
      if (!stored)
        throw new AgentMachineError(
          'SESSION_NOT_FOUND',
          `Chat "${chatId}" has no stored session to keep its steered messages in.`,
        );
      await store.save(chatId, stored.state.withSteeredMessages(late), stored.version);
    } catch (error) {
      onError(error);
    }
  }

  async function stopRun(request: Request, chatId: string): Promise<Response> {
    requireJson(request);
    await allow(request, chatId, 'stop');
    const running = await streams.requestStop(chatId);
    return Response.json({ id: chatId, stopping: running }, { status: 202 });
  }

  /**
   * The chat's running stream from its start (an empty one if the run has just ended), or from the
   * answer to the message queued as `queueId` on.
   */
  async function relay(chatId: string, queueId?: string): Promise<Response> {
    const read = new AbortController();
    const all = (await streams.read(chatId, { signal: read.signal })) ?? noChunks();
    const chunks = queueId === undefined ? all : fromQueuedAnswer(all, queueId);
    return new Response(
      sse(chunks, () => read.abort()),
      { headers: UI_MESSAGE_STREAM_HEADERS },
    );
  }

  function startMessage(
    chatId: string,
    state: AgentState,
    text: string,
    signal: AbortSignal,
    inspect: (event: InspectionEvent) => void,
  ): AgentStream {
    if (state.approval()) throw ApprovalError.pending(state);
    // messages steered in as the last run concluded came before this one
    return agent.stream(state.withSteeringApplied().withUserMessage(text), {
      sessionId: chatId,
      signal,
      inspect,
    });
  }

  function startDecisions(
    chatId: string,
    state: AgentState | null,
    decisions: readonly ChatDecision[],
    signal: AbortSignal,
    inspect: (event: InspectionEvent) => void,
  ) {
    if (!state) throw new ChatRequestError('SESSION_NOT_FOUND', `No chat "${chatId}" to approve calls in.`);
    const inputs = toApprovalInputs(state, decisions);
    let decided = state;
    for (const { toolCallId, path: _path, callPath, signature: _signature, ...decision } of inputs)
      decided = decided.withApprovalDecision(toolCallId, decision as ApprovalDecision, { callPath });
    const messageId = state.executionId() ?? '';
    const message = toUIMessages(decided).find((m) => m.id === messageId);
    const continuation = {
      messageId,
      toolCallIds: [
        ...(state
          .currentStep()
          ?.requestedToolCalls()
          .map((c) => c.id) ?? []),
        ...state.pendingApprovals().map(chatToolCallId),
      ],
      denied: new Set(decisions.filter((d) => !d.approved).map((d) => d.toolCallId)),
      prefix: message ? toUIMessageChunks(message) : [],
    };
    return new AgentStream(
      (onEvent) => agent.decide(chatId, inputs, { onEvent, inspect, signal }),
      continuation,
    );
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
    return new Response(
      sse(chunks, () => read.abort()),
      { headers: UI_MESSAGE_STREAM_HEADERS },
    );
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
