import type { AgentState } from '../state/agent-state';
import type { RunListener } from '../state/event-source';
import type { AgentEvent } from '../state/loop-events';
import {
  createUIChunkMapper,
  type RunEntry,
  type RunOutcome,
  type UIMessageStreamOptions,
  type UIStreamContinuation,
} from './ui-chunk-mapper';
import { UI_MESSAGE_STREAM_HEADERS, type UIMessageChunk } from './ui-message';

/** What starts the run: given a listener (`onEvent`), it runs and resolves with the final state. */
export type RunStarter = (onEvent: RunListener) => Promise<AgentState>;

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
    // A subagent's entry carries no step: the chunks of steps are the root agent's.
    const listen: RunListener = (event, { step, subagent }) =>
      this.push({ event, step: subagent ? null : step, subagent });
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
