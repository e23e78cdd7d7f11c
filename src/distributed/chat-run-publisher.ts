/**
 * A chat served by the worker pool, on the worker's side: the job's run is written as UI message
 * chunks (the chat handler's own mapping, AgentStream and StreamWriter) to the stream the chat
 * handler opened for it, a stop asked of that stream aborts the run, and the stream's lease is kept
 * while the run works. The stream ends only with the run's last attempt: a run handed to another
 * worker (a crash, a graceful close, a retry) goes on in the same stream, after a
 * `data-step-restarted` chunk.
 */
import type { InspectionEvent } from 'xstate';
import { SessionNotFoundError } from '../persistence/errors';
import type { SessionStore } from '../persistence/session-store';
import type { AgentError } from '../state/agent-error';
import type { AgentState } from '../state/agent-state';
import type { RunListener } from '../state/event-source';
import type { Message } from '../state/message';
import { AgentStream } from '../ui/agent-stream';
import { type ChatJobStream, STEER_ID } from '../ui/chat-pool-handler';
import { runningActor } from '../ui/running-actor';
import { stepRestartedChunk } from '../ui/step-restart';
import type { StreamStore } from '../ui/stream-store';
import { StreamWriter } from '../ui/stream-writer';
import type { UIMessageChunk } from '../ui/ui-message';

export interface ChatRunPublisherOptions {
  readonly streams: StreamStore;
  readonly chatId: string;
  readonly chatStream: ChatJobStream;
  /** The step this run starts with when it takes over a run another worker began; null for a new run. */
  readonly restartedStep: number | null;
  /** The session as stored when the job started: messages steered before and held there are not steered again. */
  readonly stored: AgentState | null;
  readonly workerId: string;
  /** Called when a stop of the chat's stream is asked for (also one asked before). */
  readonly onStop: () => void;
  readonly onError: (error: unknown) => void;
  /** How often the stream's lease is renewed while the run writes nothing, in ms. Default 10,000. */
  readonly renewMs?: number;
  readonly errorText?: (error: AgentError) => string;
}

export interface ChatRunPublisher {
  /** The run's listener: its events become the stream's chunks. */
  readonly onEvent: RunListener;
  /** The run's inspector: it finds the run's actor, for the messages steered to the chat. */
  readonly inspect: (event: InspectionEvent) => void;
  /**
   * The run ended: the stream ends with it, then the messages steered too late for it are saved
   * to the session's steering section (the next execution applies them first); resolves with the
   * session so saved, or null when none came.
   */
  conclude(final: AgentState, store: SessionStore): Promise<{ state: AgentState; version: number } | null>;
  /** The run ended (with its final state, or its error on its last attempt): the stream ends with it. */
  finish(outcome: { readonly state: AgentState } | { readonly error: unknown }): Promise<void>;
  /** The run goes on elsewhere (another worker, a retry): what was written stays, the stream stays open. */
  handOver(): Promise<void>;
}

export async function publishChatRun(options: ChatRunPublisherOptions): Promise<ChatRunPublisher> {
  const { streams, chatId, chatStream, restartedStep, onError } = options;
  const writer = new StreamWriter(streams, chatId, chatStream.streamId, { onError });
  let listener: RunListener = () => {};
  let settle: (outcome: { readonly state: AgentState } | { readonly error: unknown }) => void = () => {};
  const ended = new Promise<AgentState>((resolve, reject) => {
    settle = (outcome) => ('state' in outcome ? resolve(outcome.state) : reject(outcome.error));
  });
  const { continuation } = chatStream;
  const run = new AgentStream(
    (onEvent) => {
      listener = onEvent;
      return ended;
    },
    continuation && { ...continuation, denied: new Set(continuation.denied) },
  );
  if (restartedStep !== null)
    writer.write(stepRestartedChunk({ stepNumber: restartedStep, workerId: options.workerId }));
  // a run taken over does not replay the message's start: the stream has it
  const reader = run
    .toUIMessageStream({ replay: restartedStep === null, errorText: options.errorText })
    .getReader();
  const pumped = (async () => {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      writer.write(value as UIMessageChunk);
    }
  })();
  const unlisten = await streams.onStop(chatId, chatStream.streamId, options.onStop);
  // steered through any chat handler (whileRunning 'steer'); a run taken over hears them all again
  const actor = runningActor();
  const sent: Message[] = [];
  const held = steerIds(options.stored);
  const unlistenSteer = await streams.onSteer(chatId, chatStream.streamId, (message) => {
    if (held.has(steerIdOf(message))) return;
    sent.push(message);
    actor.steer(message);
  });
  const renew = setInterval(
    () => void streams.renew(chatId, chatStream.streamId).catch(onError),
    options.renewMs ?? 10_000,
  );
  renew.unref?.();
  const detach = () => {
    clearInterval(renew);
    unlisten();
  };
  const publisher: ChatRunPublisher = {
    onEvent: (event, source) => listener(event, source),
    inspect: actor.inspect,
    async conclude(final, store) {
      await publisher.finish({ state: final });
      const applied = steerIds(final);
      const late = sent.filter((message) => !applied.has(steerIdOf(message)));
      if (late.length === 0) return null;
      return keepLateSteering(store, chatId, late).catch((error: unknown) => {
        onError(error);
        return null;
      });
    },
    async finish(outcome) {
      detach();
      settle(outcome);
      await pumped.catch(onError);
      await writer.end().catch(onError);
      // messages steered until the stream ended are the run's (late ones are kept for the next)
      unlistenSteer();
    },
    async handOver() {
      detach();
      unlistenSteer();
      await reader.cancel().catch(onError);
      await writer.flush();
    },
  };
  return publisher;
}

/** Saves messages steered too late for the run to the session's steering section. */
async function keepLateSteering(
  store: SessionStore,
  sessionId: string,
  late: readonly Message[],
): Promise<{ state: AgentState; version: number }> {
  const stored = await store.load(sessionId);
  if (!stored) throw new SessionNotFoundError(sessionId);
  const state = stored.state.withSteeredMessages(late);
  return { state, version: await store.save(sessionId, state, stored.version) };
}

const steerIdOf = (message: Message): unknown => message.metadata?.[STEER_ID];

/** The steer ids of the messages a state holds, in its conversation and its steering section. */
function steerIds(state: AgentState | null): ReadonlySet<unknown> {
  const messages = state ? [...state.messages(), ...state.steeredMessages()] : [];
  return new Set(messages.map(steerIdOf).filter((id) => id !== undefined));
}

/**
 * Ends the chat stream of a job (its data, as queued) that failed for good before its run could
 * write (an unknown agent, bad data); a job without a chat stream is left alone.
 */
export async function failChatStream(
  streams: StreamStore,
  data: unknown,
  error: unknown,
  onError: (error: unknown) => void,
): Promise<void> {
  const { sessionId: chatId, chatStream } = (data ?? {}) as {
    sessionId?: unknown;
    chatStream?: ChatJobStream;
  };
  if (typeof chatId !== 'string' || typeof chatStream?.streamId !== 'string') return;
  const code = (error as { code?: unknown })?.code;
  const errorText = `The agent could not answer (${typeof code === 'string' ? code : 'error'}).`;
  await streams
    .append(chatId, chatStream.streamId, [
      { type: 'error', errorText },
      { type: 'finish', finishReason: 'error' },
    ])
    .catch(onError);
  await streams.end(chatId, chatStream.streamId);
}
