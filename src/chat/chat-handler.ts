import { NoSessionStoreError } from '../persistence/errors';
import type { SessionStore } from '../persistence/session-store';
import type { AgentError } from '../state/agent-error';
import type { AgentState } from '../state/agent-state';
import type { ApprovalInput } from '../state/approval';
import type { RunListener } from '../state/event-source';
import { newId } from '../state/ids';
import { decisionContinuation, toApprovalInputs } from './chat-approvals';
import { adoptHandedOff, settleHandedOff } from './chat-handoff';
import { handedOffMessage } from './chat-message-id';
import { type ChatJobStream, createPoolChatHandler, type PoolChatHandlerOptions } from './chat-pool-handler';
import { type ChatRequest, ChatRequestError } from './chat-request';
import {
  type ChatAccess,
  type ChatHandler,
  chatRoutes,
  type LedgerScopesOf,
  relayRunning,
  sessionBusy,
  type WhileRunning,
  whileRunningOption,
} from './chat-routes';
import { type ChatRunPublisher, publishChatRun } from './chat-run-publisher';
import { startChatTurn } from './chat-turn';
import type { RunHandle } from './running-actor';
import { InMemoryStreamStore, type StreamStore } from './stream-store';

/**
 * What the chat handler needs of an agent: an `Agent` from `createAgent` is one. Declared here so
 * the chat server sits below the runtime (whose `agent.chat()` starts a turn with `startChatTurn`).
 */
interface ChatAgent {
  readonly definition: { readonly store?: SessionStore };
  execute(state: AgentState, options: ChatRunOptions & { readonly sessionId: string }): Promise<AgentState>;
  decide(
    sessionId: string,
    decisions: readonly ApprovalInput[],
    options: ChatRunOptions,
  ): Promise<AgentState>;
}

/** The options a chat's run is started with: the runtime's own `runHandle` and `storedVersion` among them. */
interface ChatRunOptions {
  readonly onEvent: RunListener;
  readonly signal?: AbortSignal;
  readonly ledgerScopes?: readonly string[];
  /** The chat's handle on the run (its actor, steered without inspection). */
  readonly runHandle: RunHandle;
  /** The version of the session the POST loaded (its one load): the run's start does not load it again. */
  readonly storedVersion?: number | null;
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
  /**
   * The budget ledger scopes a request's run charges (`['tenant:acme', 'user:42']`, from its
   * cookie or token), asked once per authorized message or decision; the agent needs a `ledger`.
   */
  readonly ledgerScopes?: LedgerScopesOf;
}

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
export function createChatHandler(options: ChatHandlerOptions): ChatHandler;
/** A chat served by the worker pool: each message or decision is a job of `client` (see PoolChatHandlerOptions). */
export function createChatHandler(options: PoolChatHandlerOptions): ChatHandler;
export function createChatHandler(options: ChatHandlerOptions | PoolChatHandlerOptions): ChatHandler {
  if ('client' in options && options.client !== undefined) return createPoolChatHandler(options);
  return createAgentChatHandler(options as ChatHandlerOptions);
}

function createAgentChatHandler(options: ChatHandlerOptions): ChatHandler {
  const { agent, errorText } = options;
  if (!agent.definition.store) throw new NoSessionStoreError('createChatHandler({ agent })');
  const store: SessionStore = agent.definition.store;
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  const streams = options.streams ?? new InMemoryStreamStore();
  const renewMs = options.streamRenewMs ?? 10_000;
  const whileRunning = whileRunningOption(options.whileRunning);

  async function post(chat: ChatRequest, request: Request): Promise<Response> {
    const { chatId } = chat;
    const scopes = options.ledgerScopes && { ledgerScopes: await options.ledgerScopes(request, chatId) };
    // One run per chat across every handler sharing `streams`: claiming its stream is the lock.
    const streamId = newId();
    while (!(await streams.begin(chatId, streamId))) {
      // a run goes on: steered into it (if it ended meanwhile, the message starts the next one)
      // (queued: the process running the chat answers it next, on the same stream)
      if (whileRunning !== 'reject' && chat.kind === 'message') {
        const message = handedOffMessage(chat.text, { queued: whileRunning === 'queue' });
        const queueId = message.metadata.queueId as string | undefined;
        if (await streams.steer(chatId, message)) return relayRunning(streams, chatId, queueId);
        continue;
      }
      throw sessionBusy(chatId);
    }
    const stop = new AbortController();
    const publish = (stored: AgentState | null, chatStream: ChatJobStream) =>
      publishChatRun({
        streams,
        chatId,
        chatStream,
        restartedStep: null,
        stored,
        onStop: () => stop.abort(),
        onError,
        renewMs,
        errorText,
      });
    let started: { publisher: ChatRunPublisher; run: Promise<AgentState> };
    try {
      // the turn's one load (the hand-off's, when an earlier run left messages): the run's start is given its version
      const adopted = await adoptHandedOff(store, streams, chatId, streamId);
      const stored = adopted !== undefined ? adopted : await store.load(chatId);
      const runOptions = (publisher: ChatRunPublisher): ChatRunOptions => ({
        onEvent: publisher.onEvent,
        runHandle: publisher.runHandle,
        signal: stop.signal,
        ...scopes,
      });
      if (chat.kind === 'message') {
        started = await startChatTurn(stored?.state, chat.text, async (state) => {
          const publisher = await publish(stored?.state ?? null, { streamId });
          const run = agent.execute(state, {
            ...runOptions(publisher),
            sessionId: chatId,
            storedVersion: stored?.version ?? null,
          });
          return { publisher, run };
        });
      } else {
        if (!stored)
          throw new ChatRequestError('SESSION_NOT_FOUND', `No chat "${chatId}" to approve calls in.`);
        const inputs = toApprovalInputs(stored.state, chat.decisions);
        const continuation = decisionContinuation(stored.state, inputs, chat.decisions);
        const publisher = await publish(stored.state, { streamId, continuation });
        started = { publisher, run: agent.decide(chatId, inputs, runOptions(publisher)) };
      }
    } catch (error) {
      await streams.end(chatId, streamId);
      throw error;
    }
    void follow(chatId, started.publisher, started.run, stop.signal, scopes);
    return started.publisher.stream.toUIMessageStreamResponse({ errorText });
  }

  /**
   * Follows the run the publisher writes to the chat's stream to its end: with messages queued
   * meanwhile (`whileRunning: 'queue'`), the next execution answers them on the same stream; then
   * the publisher concludes (a stopped answer, messages steered too late, the stream's end).
   */
  async function follow(
    chatId: string,
    publisher: ChatRunPublisher,
    first: Promise<AgentState>,
    signal: AbortSignal,
    scopes: { readonly ledgerScopes: readonly string[] } | undefined,
  ): Promise<void> {
    let running = first;
    try {
      for (;;) {
        const final = await running;
        const next = await publisher.nextExecution(final, signal.aborted);
        if (!next) {
          await publisher.conclude(final, store);
          return;
        }
        running = agent.execute(next, {
          sessionId: chatId,
          onEvent: publisher.onEvent,
          runHandle: publisher.runHandle,
          signal,
          ...scopes,
        });
      }
    } catch (error) {
      // the run threw: its stream ends with the error; what the session holds leaves the stream store
      onError(error);
      await publisher.finish({ error });
      await settleHandedOff(store, streams, chatId).catch(onError);
    }
  }

  return chatRoutes({ store, streams, authorize: options.authorize, maxBodyBytes, onError, post });
}
