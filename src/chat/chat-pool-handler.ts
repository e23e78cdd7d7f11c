import type { SessionStore } from '../persistence/session-store';
import type { ApprovalInput } from '../state/approval';
import { InvalidArgumentError } from '../state/errors';
import { newId } from '../state/ids';
import type { UIMessageChunk } from '../ui/ui-message';
import { type DecisionContinuation, decisionContinuation, toApprovalInputs } from './chat-approvals';
import { handedOffMessage, STEER_ID } from './chat-message-id';
import { type ChatRequest, ChatRequestError } from './chat-request';
import {
  type ChatAccess,
  type ChatHandler,
  chatRoutes,
  type LedgerScopesOf,
  relayRunning,
  sessionBusy,
  streamResponse,
  type WhileRunning,
  whileRunningOption,
} from './chat-routes';
import { startChatTurn } from './chat-turn';
import { type AiSdkVersion, aiSdkVersionOption, clientAiSdkVersion } from './client-version';
import { mendRestartedSteps } from './step-restart';
import { StreamNotOpenError, type StreamStore } from './stream-store';

/**
 * Where a chat job writes its run's UI message stream: the stream the handler opened for it in
 * the shared StreamStore, and, for decisions, how the stream goes on with the message the client
 * holds.
 */
export interface ChatJobStream {
  readonly streamId: string;
  readonly continuation?: DecisionContinuation;
}

/**
 * What a chat handler needs of a worker pool's client: an `AgentClient` (createAgentClient) is
 * one. Each call enqueues a run whose worker writes its chunks to stream `chatStream.streamId`.
 */
export interface ChatPoolClient {
  execute(request: {
    readonly agent: string;
    readonly sessionId: string;
    readonly message: string;
    readonly chatStream: ChatJobStream;
    readonly ledgerScopes?: readonly string[];
  }): Promise<unknown>;
  decide(request: {
    readonly agent: string;
    readonly sessionId: string;
    readonly decisions: readonly ApprovalInput[];
    readonly chatStream: ChatJobStream;
    readonly ledgerScopes?: readonly string[];
  }): Promise<unknown>;
}

/** The options of a chat served by the worker pool (`createChatHandler({ client, agent, store, streams })`). */
export interface PoolChatHandlerOptions {
  /** The pool's client: each message or decision is a job (an `AgentClient`). */
  readonly client: ChatPoolClient;
  /** The name the workers registered the agent under. */
  readonly agent: string;
  /** The workers' session store (the chat id is the session id): read for messages and approvals. */
  readonly store: SessionStore;
  /** The stream store the workers write to (`createAgentWorker({ streams })`), e.g. a RedisStreamStore. */
  readonly streams: StreamStore;
  /** As `ChatHandlerOptions.authorize`. */
  readonly authorize?: (request: Request, access: ChatAccess) => boolean | Promise<boolean>;
  /** As `ChatHandlerOptions.ledgerScopes`: the scopes go with the job (the workers' agent has the ledger). */
  readonly ledgerScopes?: LedgerScopesOf;
  /** The largest request body accepted, in bytes. Default 1 MiB. */
  readonly maxBodyBytes?: number;
  /** Gets the errors answered with 500. Default: `console.error`. */
  readonly onError?: (error: unknown) => void;
  /**
   * How often the handler renews the chat stream's lease while its job waits for a worker (the
   * worker renews it once it runs), in ms; keep it under the store's `leaseMs`. Default 10,000.
   */
  readonly streamRenewMs?: number;
  /**
   * A message sent while the chat answers: `'reject'` (default) answers 409 SESSION_BUSY; `'steer'`
   * hands it to the run on its worker (the model sees it at its next step) and answers the run's
   * stream from its start; `'queue'` hands it to the run's worker, which answers it by the next
   * execution as soon as the running one ends, on the same stream (the POST answers from there).
   */
  readonly whileRunning?: WhileRunning;
  /**
   * The AI SDK major of the page's chat client (`useChat`), 6 or 7: where another worker takes a
   * run over mid-step, AI SDK 7's client is sent `reset-step` (the step's parts so far leave the
   * message before it runs again); AI SDK 6's rejects that chunk, so it is sent none (its message
   * keeps the interrupted step's parts before the step as it ran again, until a reload reads the
   * stored chat). A request's `x-ai-sdk-version` header (set on the transport's `headers`) decides
   * for that request. Default: the major of the `ai` package installed beside this library.
   */
  readonly aiSdkVersion?: AiSdkVersion;
}

/**
 * A chat handler whose runs are jobs of the worker pool: a POST claims the chat's stream (one run
 * per chat, 409 otherwise), enqueues the run naming that stream, and answers with the stream as
 * the worker writes it (from the store, followed live, until the run ends). Stop, the stream and
 * the messages are served as for any chat handler sharing the stores; where another worker took
 * the run over, the stream is mended (see `mendRestartedSteps`).
 */
export function createPoolChatHandler(options: PoolChatHandlerOptions): ChatHandler {
  const { client, agent, store, streams } = options;
  if (!store || typeof store.load !== 'function')
    throw new InvalidArgumentError(
      'store',
      "with `client`, the workers' SessionStore (a RedisSessionStore): createChatHandler({ client, agent, store, streams })",
    );
  if (typeof agent !== 'string' || agent === '')
    throw new InvalidArgumentError('agent', 'with `client`, the name the workers registered the agent under');
  if (!streams || typeof streams.begin !== 'function')
    throw new InvalidArgumentError(
      'streams',
      'with `client`, the StreamStore the workers write to (a RedisStreamStore shared with createAgentWorker({ streams }))',
    );
  const whileRunning = whileRunningOption(options.whileRunning);
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const renewMs = options.streamRenewMs ?? 10_000;
  const aiSdkVersion = aiSdkVersionOption(options.aiSdkVersion);
  /** The run's stream mended for the chat client that sent `request` (`reset-step` for AI SDK 7's alone). */
  const mendFor =
    (request: Request) =>
    (chunks: AsyncIterable<UIMessageChunk>): AsyncIterable<UIMessageChunk> =>
      mendRestartedSteps(chunks, { resetStep: clientAiSdkVersion(request, aiSdkVersion) >= 7 });

  async function post(chat: ChatRequest, request: Request): Promise<Response> {
    const { chatId } = chat;
    const mend = mendFor(request);
    const scopes = options.ledgerScopes && { ledgerScopes: await options.ledgerScopes(request, chatId) };
    const streamId = newId();
    while (!(await streams.begin(chatId, streamId))) {
      // a run goes on: steered into it, or queued for the next execution, on its worker (if it
      // ended meanwhile, the message starts the next run)
      if (whileRunning === 'reject' || chat.kind !== 'message') throw sessionBusy(chatId);
      const message = handedOffMessage(chat.text, { queued: whileRunning === 'queue' });
      const queueId = message.metadata.queueId as string | undefined;
      if (await streams.steer(chatId, message)) return relayRunning(streams, chatId, queueId, mend);
    }
    const read = new AbortController();
    let chunks: AsyncIterable<UIMessageChunk>;
    try {
      const stored = await store.load(chatId);
      // read from the stream's first chunk, before any can be written
      const opened = await streams.read(chatId, { signal: read.signal });
      if (!opened) throw new StreamNotOpenError(chatId, streamId);
      chunks = mend(opened);
      if (chat.kind === 'message') {
        // refused here as on the worker (its job starts the turn the same way, from the session it loads)
        await startChatTurn(stored?.state, chat.text, () =>
          client.execute({
            agent,
            sessionId: chatId,
            message: chat.text,
            chatStream: { streamId },
            ...scopes,
          }),
        );
      } else {
        if (!stored)
          throw new ChatRequestError('SESSION_NOT_FOUND', `No chat "${chatId}" to approve calls in.`);
        const decisions = toApprovalInputs(stored.state, chat.decisions);
        const continuation = decisionContinuation(stored.state, decisions, chat.decisions);
        await client.decide({
          agent,
          sessionId: chatId,
          decisions,
          chatStream: { streamId, continuation },
          ...scopes,
        });
        // the client holds the message so far: the replay of it that starts the stream is not sent
        chunks = afterPrefix(chunks, continuation.prefix.length);
      }
    } catch (error) {
      read.abort();
      await streams.end(chatId, streamId);
      throw error;
    }
    // the chat stays claimed while its job waits in the queue, until the worker writes
    const waiting = setInterval(
      () =>
        void streams.renew(chatId, streamId).catch((error: unknown) => {
          clearInterval(waiting);
          // not open any more: the run ended before its first chunk was read (or lost its lease)
          if (!(error instanceof StreamNotOpenError)) onError(error);
        }),
      renewMs,
    );
    waiting.unref?.();
    const stopWaiting = () => clearInterval(waiting);
    // this request's answer ends where the answer to messages queued meanwhile starts
    return streamResponse(untilFirst(untilQueued(chunks), stopWaiting), () => {
      stopWaiting();
      read.abort();
    });
  }

  return chatRoutes({
    store,
    streams,
    authorize: options.authorize,
    maxBodyBytes: options.maxBodyBytes ?? 1024 * 1024,
    onError,
    post,
    readBack: (chunks, request) => mendFor(request)(chunks),
  });
}

// STEER_ID: declared with the one id a handed-off message gets (chat-message-id.ts)
export { STEER_ID };

/** The chunks up to the `data-queued` chunk that starts the answer to queued messages. */
async function* untilQueued(chunks: AsyncIterable<UIMessageChunk>): AsyncIterable<UIMessageChunk> {
  for await (const chunk of chunks) {
    if (chunk.type === 'data-queued') return;
    yield chunk;
  }
}

/** The chunks, calling `first` once the first comes (or the stream ends without one). */
async function* untilFirst(
  chunks: AsyncIterable<UIMessageChunk>,
  first: () => void,
): AsyncIterable<UIMessageChunk> {
  try {
    for await (const chunk of chunks) {
      first();
      yield chunk;
    }
  } finally {
    first();
  }
}

/** The chunks without the `length` that follow the first `start` (the replayed part of the message). */
async function* afterPrefix(
  chunks: AsyncIterable<UIMessageChunk>,
  length: number,
): AsyncIterable<UIMessageChunk> {
  let skip = -1;
  for await (const chunk of chunks) {
    if (skip > 0) {
      skip--;
      continue;
    }
    if (skip < 0 && chunk.type === 'start') skip = length;
    yield chunk;
  }
}
