import type { AnyActorRef, InspectionEvent, Observer } from 'xstate';
import type { AgentState } from '../state/agent-state';
import type { AgentStep } from '../state/agent-step';
import type { AgentEvent } from '../state/loop-events';
import {
  createUIChunkMapper,
  type RunEntry,
  type RunOutcome,
  type SubagentOrigin,
  type UIMessageStreamOptions,
  type UIStreamContinuation,
} from './ui-chunk-mapper';
import { UI_MESSAGE_STREAM_HEADERS, type UIMessageChunk } from './ui-message';

/** What starts the run: given an inspection listener, it runs and resolves with the final state. */
export type RunStarter = (listen: (event: InspectionEvent) => void) => Promise<AgentState>;

export interface UIStreamReadOptions extends UIMessageStreamOptions {
  /**
   * Begin with the chunks of the assistant message as it was before this stream (after an
   * approval, the part streamed by the earlier request): for a client that reconnects after a
   * reload and rebuilds the message from the replay. Default false.
   */
  readonly replay?: boolean;
}

/**
 * One execution as a stream, started at once: `for await (const event of stream)` gives the run's
 * events as they happen (the agent's and its subagents'), `await stream.state` the final state
 * (or the state waiting for approval), and `toUIMessageStream()` / `toUIMessageStreamResponse()`
 * the AI SDK's UI message stream for chat clients (`useChat`). Every reader starts from the
 * beginning, so any number of them (and late ones) see the whole run.
 *
 * @example
 * const stream = agent.stream(AgentState.empty().withUserMessage('Hi'), { sessionId: 'chat-1' });
 * return stream.toUIMessageStreamResponse();   // in a route handler
 */
export class AgentStream implements AsyncIterable<AgentEvent> {
  /** The final state; rejects as `execute()` would. */
  readonly state: Promise<AgentState>;
  private readonly entries: RunEntry[] = [];
  private outcome: RunOutcome | null = null;
  private waiters: Array<() => void> = [];

  constructor(
    start: RunStarter,
    private readonly continuation?: UIStreamContinuation & { readonly prefix: readonly UIMessageChunk[] },
  ) {
    const listen = (inspection: InspectionEvent) => {
      if (inspection.type !== '@xstate.actor') return;
      const ref = inspection.actorRef as AnyActorRef;
      const subagent = subagentOrigin(ref);
      ref.on('*', (event: AgentEvent) => {
        // XState emits after the snapshot is updated: the step read here is the one of the event.
        this.push({ event, step: subagent ? null : stepOf(ref, event), subagent });
      });
    };
    this.state = start(listen).then(
      (state) => {
        this.settle({ state });
        return state;
      },
      (error: unknown) => {
        this.settle({ error });
        throw error;
      },
    );
    // The error also ends the iteration and the UI stream; a caller who reads neither `state`
    // nor those must not get an unhandled rejection for it.
    this.state.catch(() => undefined);
  }

  async *[Symbol.asyncIterator](): AsyncIterator<AgentEvent> {
    for (let i = 0; ; ) {
      const entry = this.entries[i];
      if (entry) {
        i++;
        yield entry.event;
        continue;
      }
      if (this.outcome) {
        if ('error' in this.outcome) throw this.outcome.error;
        return;
      }
      await this.changed();
    }
  }

  /** The run as UI message stream chunks (the AI SDK's protocol), from its beginning. */
  toUIMessageStream(options: UIStreamReadOptions = {}): ReadableStream<UIMessageChunk> {
    const mapper = createUIChunkMapper(options, this.continuation);
    const prefix = options.replay ? [...(this.continuation?.prefix ?? [])] : [];
    let next = 0;
    let cancelled = false;
    return new ReadableStream<UIMessageChunk>({
      // A reader that goes away (a closed page) leaves the run going; it only stops reading.
      cancel: () => {
        cancelled = true;
      },
      pull: async (controller) => {
        for (;;) {
          if (cancelled) return;
          const entry = this.entries[next];
          const chunks = entry ? mapper.map(entry) : this.outcome ? mapper.end(this.outcome) : null;
          if (chunks === null) {
            await this.changed();
            continue;
          }
          if (entry) next++;
          for (const chunk of chunks) {
            controller.enqueue(chunk);
            // The earlier part of the message goes right after its `start`.
            if (chunk.type === 'start') for (const earlier of prefix.splice(0)) controller.enqueue(earlier);
          }
          if (!entry) controller.close();
          if (chunks.length > 0 || !entry) return;
        }
      },
    });
  }

  /** A Response streaming the UI message stream as Server-Sent Events, with the protocol's headers. */
  toUIMessageStreamResponse(init: ResponseInit & UIStreamReadOptions = {}): Response {
    const { status, statusText, headers, errorText, replay } = init;
    const body = this.toUIMessageStream({ errorText, replay }).pipeThrough(sseEncoder());
    const merged = new Headers(UI_MESSAGE_STREAM_HEADERS);
    for (const [name, value] of new Headers(headers)) merged.set(name, value);
    return new Response(body, { status: status ?? 200, statusText, headers: merged });
  }

  /** Whether the run has ended (its outcome is known). */
  get done(): boolean {
    return this.outcome !== null;
  }

  private push(entry: RunEntry): void {
    this.entries.push(entry);
    this.wake();
  }

  private settle(outcome: RunOutcome): void {
    this.outcome = outcome;
    this.wake();
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  private changed(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

/** An inspection observer of the user's, and the stream's listener, as one. */
export function alongside(
  user: Observer<InspectionEvent> | ((event: InspectionEvent) => void) | undefined,
  listen: (event: InspectionEvent) => void,
): (event: InspectionEvent) => void {
  if (!user) return listen;
  return (event) => {
    listen(event);
    if (typeof user === 'function') user(event);
    else user.next?.(event);
  };
}

const SUBAGENT_ID = /^subagent:([^:]+):(.+)$/;

/**
 * Subagent actors are named `subagent:<name>:<toolCallId>` by the runtime; the subagent actors
 * above this one (its parents) give the rest of its call path.
 */
function subagentOrigin(ref: AnyActorRef): SubagentOrigin | null {
  const match = SUBAGENT_ID.exec(ref.id);
  if (!match) return null;
  const callPath: string[] = [];
  for (let at: AnyActorRef | undefined = ref; at; at = at._parent) {
    const call = SUBAGENT_ID.exec(at.id);
    if (call) callPath.unshift(call[2] as string);
  }
  return { name: match[1] as string, toolCallId: match[2] as string, callPath };
}

function stepOf(ref: AnyActorRef, event: AgentEvent): AgentStep | null {
  const state = (ref.getSnapshot() as { context?: { state?: AgentState } }).context?.state;
  if (!state) return null;
  return event.type === 'step.finished' ? state.lastStep() : state.currentStep();
}

function sseEncoder(): TransformStream<UIMessageChunk, Uint8Array> {
  const encoder = new TextEncoder();
  return new TransformStream({
    transform(chunk, controller) {
      controller.enqueue(encoder.encode(`data: ${JSON.stringify(chunk)}\n\n`));
    },
    flush(controller) {
      controller.enqueue(encoder.encode('data: [DONE]\n\n'));
    },
  });
}
