/**
 * A chat's run published to its stream, the one way for both handlers: the in-process handler's
 * run and the pool's job on its worker. The run is written as UI message chunks (AgentStream's
 * mapping, StreamWriter) to the stream the handler opened for it, a stop asked of that stream
 * aborts the run, messages steered to it reach the run's actor (queued ones wait for the next
 * execution, on the same stream), and the stream's lease is kept while the run works. In the pool,
 * the stream ends only with the run's last attempt: a run handed to another worker (a crash, a
 * graceful close, a retry) goes on in the same stream, after a `data-step-restarted` chunk.
 */
import type { SessionStore } from '../persistence/session-store';
import type { AgentError } from '../state/agent-error';
import type { AgentState } from '../state/agent-state';
import type { RunListener } from '../state/event-source';
import { ExecutionStatus } from '../state/execution-status';
import type { AgentEvent } from '../state/loop-events';
import type { Message } from '../state/message';
import { AgentStream, type UIStreamReadOptions } from '../ui/agent-stream';
import type { UIStreamContinuation } from '../ui/ui-chunk-mapper';
import type { UIMessageChunk } from '../ui/ui-message';
import { streamContinuation } from './chat-approvals';
import { keepLateSteering, settleHandedOff } from './chat-handoff';
import { heldIds, holds } from './chat-message-id';
import type { ChatJobStream } from './chat-pool-handler';
import { queuedMarker, withQueued } from './chat-queue';
import { keepStoppedAnswer } from './chat-stopped';
import { type RunHandle, runningActor } from './running-actor';
import { stepRestartedChunk } from './step-restart';
import type { StreamStore } from './stream-store';
import { StreamWriter } from './stream-writer';

export interface ChatRunPublisherOptions {
  readonly streams: StreamStore;
  readonly chatId: string;
  readonly chatStream: ChatJobStream;
  /** The step this run starts with when it takes over a run another worker began; null for a new run. */
  readonly restartedStep: number | null;
  /** The session as stored when the run started: messages steered before and held there are not steered again. */
  readonly stored: AgentState | null;
  /** The worker that runs it (named in `data-step-restarted`). */
  readonly workerId?: string;
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
  /** The run's handle (its start's `runHandle`): the run's actor, which the messages steered to the chat go to. */
  readonly runHandle: RunHandle;
  /** The first execution's events as an AgentStream (the in-process handler answers its POST with it). */
  readonly stream: AgentStream;
  /**
   * The run ended: what the model had streamed of an answer a person stopped is saved, the stream
   * ends, then the messages steered too late for it are saved to the session's steering section (the next execution applies them first); resolves with the
   * session so saved, or null when none came.
   */
  conclude(final: AgentState, store: SessionStore): Promise<{ state: AgentState; version: number } | null>;
  /**
   * The execution ended with `final`: when messages were queued to the chat meanwhile (and it
   * completed, unstopped), the state the next execution runs (they applied), after their
   * `data-queued` chunk on the same stream; else null.
   */
  nextExecution(final: AgentState, aborted: boolean): Promise<AgentState | null>;
  /** The run ended (with its final state, or its error on its last attempt): the stream ends with it. */
  finish(outcome: { readonly state: AgentState } | { readonly error: unknown }): Promise<void>;
  /** The run goes on elsewhere (another worker, a retry): what was written stays, the stream stays open. */
  handOver(): Promise<void>;
}

export async function publishChatRun(options: ChatRunPublisherOptions): Promise<ChatRunPublisher> {
  const { streams, chatId, chatStream, restartedStep, onError } = options;
  const writer = new StreamWriter(streams, chatId, chatStream.streamId, { onError });
  if (restartedStep !== null)
    writer.write(stepRestartedChunk({ stepNumber: restartedStep, workerId: options.workerId ?? '' }));
  const { continuation } = chatStream;
  // a run taken over does not replay the message's start: the stream has it
  let current = pumpExecution(
    writer,
    continuation && streamContinuation(continuation),
    { replay: restartedStep === null, errorText: options.errorText },
    onError,
  );
  const unlisten = await streams.onStop(chatId, chatStream.streamId, options.onStop);
  // steered or queued through any chat handler; a run taken over hears them all again
  const received: Message[] = [];
  const queued: Message[] = [];
  const held = heldIds(options.stored);
  const unlistenSteer = await streams.onSteer(chatId, chatStream.streamId, (message) => {
    if (holds(held, message)) return;
    received.push(message);
    if (message.metadata?.queueId !== undefined) queued.push(message);
    else current.actor.steer(message);
  });
  const renew = setInterval(
    () => void streams.renew(chatId, chatStream.streamId).catch(onError),
    options.renewMs ?? 10_000,
  );
  renew.unref?.();
  // what the model streamed: a stop mid-answer keeps the part the page saw
  const deltas: AgentEvent[] = [];
  let detached = false;
  /** Stops renewing and listening; false when it was done already (the job ends one way only). */
  const detach = () => {
    if (detached) return false;
    detached = true;
    clearInterval(renew);
    unlisten();
    return true;
  };
  const publisher: ChatRunPublisher = {
    onEvent: (event, source) => {
      if (event.type === 'text.delta') deltas.push(event);
      current.listener(event, source);
    },
    runHandle: { attach: (actor) => current.actor.attach(actor) },
    stream: current.run,
    async nextExecution(final, aborted) {
      if (queued.length === 0 || aborted || final.status() !== ExecutionStatus.Completed) return null;
      if (final.approval()) return null;
      const messages = queued.splice(0);
      current.settle({ state: final });
      await current.pumped;
      writer.write(queuedMarker(messages));
      current = pumpExecution(writer, undefined, { replay: false, errorText: options.errorText }, onError);
      return withQueued(final, messages);
    },
    async conclude(final, store) {
      // stopped mid-answer: what the page saw is saved before its stream ends (a reload finds it)
      let kept = await keepStoppedAnswer(store, chatId, final, deltas.splice(0)).catch((error: unknown) => {
        onError(error);
        return null;
      });
      const applied = heldIds(final);
      const taken = new Set<Message>();
      /** Saves the messages steered too late for the run, not saved yet, to the session's steering section. */
      const keepLate = async (): Promise<boolean> => {
        const late = received.filter((message) => !taken.has(message) && !holds(applied, message));
        for (const message of late) taken.add(message);
        if (late.length === 0) return false;
        kept = await keepLateSteering(store, chatId, late).catch((error: unknown) => {
          onError(error);
          return kept;
        });
        return true;
      };
      // what the session holds is no longer the stream store's to keep: settled before the stream
      // ends, so that a reader who sees the end finds the session complete
      current.settle({ state: final });
      await current.pumped;
      await keepLate();
      await settleHandedOff(store, streams, chatId).catch(onError);
      await publisher.finish({ state: final });
      // steered while the stream was ending: the run's too
      if (await keepLate()) await settleHandedOff(store, streams, chatId).catch(onError);
      return kept;
    },
    async finish(outcome) {
      if (!detach()) return;
      current.settle(outcome);
      await current.pumped;
      await writer.end().catch(onError);
      // messages steered until the stream ended are the run's (late ones are kept for the next)
      unlistenSteer();
    },
    async handOver() {
      if (!detach()) return;
      unlistenSteer();
      await current.reader.cancel().catch(onError);
      await writer.flush();
    },
  };
  return publisher;
}

/**
 * One execution of the chat's run as UI message chunks, written to `writer` as they come: its
 * listener, the actor steered messages go to, and `settle` with its end.
 */
function pumpExecution(
  writer: StreamWriter,
  continuation: (UIStreamContinuation & { readonly prefix: readonly UIMessageChunk[] }) | undefined,
  read: UIStreamReadOptions,
  onError: (error: unknown) => void,
) {
  let listener: RunListener = () => {};
  let settle: (outcome: { readonly state: AgentState } | { readonly error: unknown }) => void = () => {};
  const ended = new Promise<AgentState>((resolve, reject) => {
    settle = (outcome) => ('state' in outcome ? resolve(outcome.state) : reject(outcome.error));
  });
  const run = new AgentStream((onEvent) => {
    listener = onEvent;
    return ended;
  }, continuation);
  const reader = run.toUIMessageStream(read).getReader();
  const pumped = (async () => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return;
        writer.write(value as UIMessageChunk);
      }
    } catch (error) {
      onError(error);
    }
  })();
  return {
    listener: ((event, source) => listener(event, source)) as RunListener,
    actor: runningActor(),
    settle,
    pumped,
    reader,
    run,
  };
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
