import type { InspectionEvent } from 'xstate';
import { NoSessionStoreError } from '../persistence/errors';
import type { SessionStore } from '../persistence/session-store';
import type { AgentError } from '../state/agent-error';
import { AgentState } from '../state/agent-state';
import type { ApprovalInput } from '../state/approval';
import { ApprovalError } from '../state/approval-error';
import type { RunListener } from '../state/event-source';
import { newId } from '../state/ids';
import { Message } from '../state/message';
import { AgentStream } from '../ui/agent-stream';
import { decisionContinuation, streamContinuation, toApprovalInputs } from './chat-approvals';
import { adoptHandedOff, keepLateSteering, settleHandedOff } from './chat-handoff';
import { createPoolChatHandler, type PoolChatHandlerOptions, STEER_ID } from './chat-pool-handler';
import { nextQueuedExecution } from './chat-queue';
import { type ChatDecision, type ChatRequest, ChatRequestError } from './chat-request';
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
import { eventsOf, keepStoppedAnswer } from './chat-stopped';
import { type RunningActor, runningActor } from './running-actor';
import { InMemoryStreamStore, type StreamStore } from './stream-store';
import { StreamWriter } from './stream-writer';

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
      readonly ledgerScopes?: readonly string[];
    },
  ): AgentStream;
  decide(
    sessionId: string,
    decisions: readonly ApprovalInput[],
    options: {
      readonly onEvent: RunListener;
      readonly signal?: AbortSignal;
      readonly inspect?: (event: InspectionEvent) => void;
      readonly ledgerScopes?: readonly string[];
    },
  ): Promise<AgentState>;
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

/** A request's ledger scopes, as run options (none without `ledgerScopes`). */
type Scopes = { readonly ledgerScopes: readonly string[] } | undefined;

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
        const queueId = whileRunning === 'queue' ? newId() : undefined;
        const metadata = queueId ? { queueId } : { [STEER_ID]: newId() };
        const message = Message.of({ role: 'user', content: chat.text, metadata });
        if (await streams.steer(chatId, message)) return relayRunning(streams, chatId, queueId);
        continue;
      }
      throw sessionBusy(chatId);
    }
    const stop = new AbortController();
    const actor = runningActor();
    let stream: AgentStream;
    try {
      await adoptHandedOff(store, streams, chatId, streamId);
      const stored = await store.load(chatId);
      stream =
        chat.kind === 'message'
          ? startMessage(
              chatId,
              stored?.state ?? AgentState.empty(),
              chat.text,
              stop.signal,
              actor.inspect,
              scopes,
            )
          : startDecisions(chatId, stored?.state ?? null, chat.decisions, stop.signal, actor.inspect, scopes);
    } catch (error) {
      await streams.end(chatId, streamId);
      throw error;
    }
    void publish(stream, chatId, streamId, stop, actor, scopes);
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
    scopes: Scopes,
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
          agent.stream(state, { sessionId: chatId, signal: stop.signal, ...scopes }),
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
      const ended = final;
      if (ended) {
        // stopped mid-answer: what the page saw of the answer stays in the chat
        await eventsOf(running)
          .then((events) => keepStoppedAnswer(store, chatId, ended, events))
          .catch((error: unknown) => onError(error));
        // queued as the run concluded, or not answered (it stopped or failed): kept for the next one
        await keepLateSteering(store, chatId, [...actor.unapplied(ended), ...queued.splice(0)]).catch(
          (error: unknown) => onError(error),
        );
      }
      // what the session holds now leaves the stream store; the rest waits for the next run
      await settleHandedOff(store, streams, chatId).catch((error: unknown) => onError(error));
      await writer.end().catch((error: unknown) => onError(error));
    }
  }

  function startMessage(
    chatId: string,
    state: AgentState,
    text: string,
    signal: AbortSignal,
    inspect: (event: InspectionEvent) => void,
    scopes: Scopes,
  ): AgentStream {
    if (state.approval()) throw ApprovalError.pending(state);
    // messages steered in as the last run concluded came before this one
    return agent.stream(state.withSteeringApplied().withUserMessage(text), {
      sessionId: chatId,
      signal,
      inspect,
      ...scopes,
    });
  }

  function startDecisions(
    chatId: string,
    state: AgentState | null,
    decisions: readonly ChatDecision[],
    signal: AbortSignal,
    inspect: (event: InspectionEvent) => void,
    scopes: Scopes,
  ) {
    if (!state) throw new ChatRequestError('SESSION_NOT_FOUND', `No chat "${chatId}" to approve calls in.`);
    const inputs = toApprovalInputs(state, decisions);
    const continuation = streamContinuation(decisionContinuation(state, inputs, decisions));
    return new AgentStream(
      (onEvent) => agent.decide(chatId, inputs, { onEvent, inspect, signal, ...scopes }),
      continuation,
    );
  }

  return chatRoutes({ store, streams, authorize: options.authorize, maxBodyBytes, onError, post });
}
