import { AgentMachineError } from '../state/errors';
import type { Message } from '../state/message';
import type { UIMessageChunk } from '../ui/ui-message';
import { chatMessageId } from './chat-message-id';

/**
 * Where a chat's current run keeps its UI message stream, so that any process sharing the store
 * can read it from its start and follow it live (a reload served by another replica), tell whether
 * a run goes on (one run per chat across processes), and ask the run to stop.
 *
 * One stream per chat at a time: `begin` claims it (false while another is open), the writer
 * `append`s chunks in order and `end`s it; an ended stream stays readable `ttlSeconds`. An open
 * stream whose writer died without ending it is given up after `leaseMs` without an append or a
 * `renew` (the next `begin` may claim the chat). `InMemoryStreamStore` serves one process;
 * `RedisStreamStore` (agent-machine/distributed) serves many.
 */
export interface StreamStore {
  /** Opens stream `streamId` for the chat; false (and nothing changes) while another is open. */
  begin(chatId: string, streamId: string): Promise<boolean>;
  /** Adds chunks to the open stream, in order; throws StreamNotOpenError when it is not the open one. */
  append(chatId: string, streamId: string, chunks: readonly UIMessageChunk[]): Promise<void>;
  /** Keeps the open stream's lease while its run works without writing (a long tool call). */
  renew(chatId: string, streamId: string): Promise<void>;
  /** Ends the stream: its readers get what is left and finish. Ending a stream that is not open does nothing. */
  end(chatId: string, streamId: string): Promise<void>;
  /** The id of the chat's open stream, or null when no run goes on. */
  active(chatId: string): Promise<string | null>;
  /**
   * The chat's open stream, from its first chunk, following it until it ends (or `signal` aborts);
   * null when no stream is open. Every chunk once, in order.
   */
  read(
    chatId: string,
    options?: { readonly signal?: AbortSignal },
  ): Promise<AsyncIterable<UIMessageChunk> | null>;
  /** Asks the run of the chat's open stream to stop, in whichever process it runs; false when none is open. */
  requestStop(chatId: string): Promise<boolean>;
  /**
   * Calls `listener` when a stop of stream `streamId` is asked for (also when it was asked for
   * before this call). Resolves with the function that stops listening.
   */
  onStop(chatId: string, streamId: string, listener: () => void): Promise<() => void>;
  /**
   * Hands `message` to the run of the chat's open stream, in whichever process it runs (the chat
   * handler's `whileRunning: 'steer'` and `'queue'`), and keeps it in `handedOff` until a run
   * settles it; false (and nothing kept) when none is open.
   */
  steer(chatId: string, message: Message): Promise<boolean>;
  /**
   * Calls `listener` with each message steered to stream `streamId`, once each and in order (those
   * steered before this call too). Resolves with the function that stops listening.
   */
  onSteer(chatId: string, streamId: string, listener: (message: Message) => void): Promise<() => void>;
  /**
   * Every message steered to the chat's runs (`steer`) that no run has `settle`d yet, in the order
   * they came, each with the stream it was steered to: kept across streams, until settled, so that
   * the messages of a run whose process died are taken by the chat's next run.
   */
  handedOff(chatId: string): Promise<readonly HandedOff[]>;
  /** Forgets the handed-off messages with these `handOffId`s (they are in the session now). */
  settle(chatId: string, ids: readonly string[]): Promise<void>;
  /** Releases the store's connections and timers. */
  close(): Promise<void>;
}

/** A message steered (or queued) to a chat's run and not settled yet, and the stream it was steered to. */
export interface HandedOff {
  readonly streamId: string;
  readonly message: Message;
}

/**
 * What tells a handed-off message apart: the id the chat handler gave it at its POST
 * (`chatMessageId`), else (a message steered into the store by other means) its role and text.
 */
export function handOffId(message: Message): string {
  return chatMessageId(message) ?? `${message.role}:${message.content}`;
}

/** An append to a stream that is not the chat's open one (it ended, or its lease ran out and another run took the chat). */
export class StreamNotOpenError extends AgentMachineError {
  static override get name(): string {
    return 'StreamNotOpenError';
  }

  constructor(
    readonly chatId: string,
    readonly streamId: string,
  ) {
    super(
      'STREAM_NOT_OPEN',
      `Stream "${streamId}" of chat "${chatId}" is not open: it ended, or its lease ran out (leaseMs) and another run took the chat.`,
    );
  }
}

export interface StreamStoreOptions {
  /** How long an ended stream stays readable, in seconds. Default 3600. */
  readonly ttlSeconds?: number;
  /** How long an open stream lives without an append or a renew, in ms. Default 30,000. */
  readonly leaseMs?: number;
}

interface MemoryStream {
  readonly id: string;
  readonly chunks: UIMessageChunk[];
  ended: boolean;
  stopAsked: boolean;
  leaseUntil: number;
  waiters: Set<() => void>;
  stopListeners: Set<() => void>;
  readonly steered: Message[];
  steerListeners: Set<(message: Message) => void>;
}

/**
 * The default StreamStore: streams in this process's memory, for a chat handler that runs its
 * agents itself in one process.
 *
 * @example
 * const streams = new InMemoryStreamStore();
 * const handler = createChatHandler({ agent, streams });
 */
export class InMemoryStreamStore implements StreamStore {
  private readonly streams = new Map<string, MemoryStream>();
  private readonly expiries = new Map<string, ReturnType<typeof setTimeout>>();
  private readonly pending = new Map<string, HandedOff[]>();
  private readonly ttlMs: number;
  private readonly leaseMs: number;

  constructor(
    options: StreamStoreOptions = {},
    private readonly now: () => number = Date.now,
  ) {
    this.ttlMs = (options.ttlSeconds ?? 3600) * 1000;
    this.leaseMs = options.leaseMs ?? 30_000;
  }

  private open(chatId: string): MemoryStream | null {
    const stream = this.streams.get(chatId);
    return stream && !stream.ended && stream.leaseUntil > this.now() ? stream : null;
  }

  async begin(chatId: string, streamId: string): Promise<boolean> {
    if (this.open(chatId)) return false;
    this.forget(chatId);
    this.streams.set(chatId, {
      id: streamId,
      chunks: [],
      ended: false,
      stopAsked: false,
      leaseUntil: this.now() + this.leaseMs,
      waiters: new Set(),
      stopListeners: new Set(),
      steered: [],
      steerListeners: new Set(),
    });
    return true;
  }

  private owned(chatId: string, streamId: string): MemoryStream {
    const stream = this.open(chatId);
    if (!stream || stream.id !== streamId) throw new StreamNotOpenError(chatId, streamId);
    stream.leaseUntil = this.now() + this.leaseMs;
    return stream;
  }

  async append(chatId: string, streamId: string, chunks: readonly UIMessageChunk[]): Promise<void> {
    const stream = this.owned(chatId, streamId);
    stream.chunks.push(...chunks);
    wake(stream);
  }

  async renew(chatId: string, streamId: string): Promise<void> {
    this.owned(chatId, streamId);
  }

  async end(chatId: string, streamId: string): Promise<void> {
    const stream = this.streams.get(chatId);
    if (!stream || stream.id !== streamId || stream.ended) return;
    stream.ended = true;
    stream.stopListeners.clear();
    stream.steerListeners.clear();
    wake(stream);
    const expiry = setTimeout(() => {
      if (this.streams.get(chatId) === stream) this.forget(chatId);
    }, this.ttlMs);
    expiry.unref?.();
    this.expiries.set(chatId, expiry);
  }

  async active(chatId: string): Promise<string | null> {
    return this.open(chatId)?.id ?? null;
  }

  async read(
    chatId: string,
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<AsyncIterable<UIMessageChunk> | null> {
    const stream = this.open(chatId);
    if (!stream) return null;
    const { signal } = options;
    return {
      async *[Symbol.asyncIterator]() {
        for (let i = 0; ; ) {
          if (i < stream.chunks.length) {
            yield stream.chunks[i++] as UIMessageChunk;
            continue;
          }
          if (stream.ended || signal?.aborted) return;
          await new Promise<void>((resolve) => {
            const done = () => {
              stream.waiters.delete(done);
              signal?.removeEventListener('abort', done);
              resolve();
            };
            stream.waiters.add(done);
            signal?.addEventListener('abort', done, { once: true });
          });
        }
      },
    };
  }

  async requestStop(chatId: string): Promise<boolean> {
    const stream = this.open(chatId);
    if (!stream) return false;
    stream.stopAsked = true;
    for (const listener of [...stream.stopListeners]) listener();
    return true;
  }

  async onStop(chatId: string, streamId: string, listener: () => void): Promise<() => void> {
    const stream = this.streams.get(chatId);
    if (!stream || stream.id !== streamId || stream.ended) return () => {};
    if (stream.stopAsked) listener();
    stream.stopListeners.add(listener);
    return () => stream.stopListeners.delete(listener);
  }

  async steer(chatId: string, message: Message): Promise<boolean> {
    const stream = this.open(chatId);
    if (!stream) return false;
    stream.steered.push(message);
    const pending = this.pending.get(chatId) ?? [];
    pending.push({ streamId: stream.id, message });
    this.pending.set(chatId, pending);
    for (const listener of [...stream.steerListeners]) listener(message);
    return true;
  }

  async onSteer(chatId: string, streamId: string, listener: (message: Message) => void): Promise<() => void> {
    const stream = this.streams.get(chatId);
    if (!stream || stream.id !== streamId || stream.ended) return () => {};
    for (const message of stream.steered) listener(message);
    stream.steerListeners.add(listener);
    return () => stream.steerListeners.delete(listener);
  }

  async handedOff(chatId: string): Promise<readonly HandedOff[]> {
    return [...(this.pending.get(chatId) ?? [])];
  }

  async settle(chatId: string, ids: readonly string[]): Promise<void> {
    const settled = new Set(ids);
    const left = (this.pending.get(chatId) ?? []).filter((h) => !settled.has(handOffId(h.message)));
    if (left.length > 0) this.pending.set(chatId, left);
    else this.pending.delete(chatId);
  }

  async close(): Promise<void> {
    for (const chatId of [...this.streams.keys()]) this.forget(chatId);
    this.pending.clear();
  }

  private forget(chatId: string): void {
    const expiry = this.expiries.get(chatId);
    if (expiry) clearTimeout(expiry);
    this.expiries.delete(chatId);
    const stream = this.streams.get(chatId);
    if (stream) {
      stream.ended = true;
      wake(stream);
    }
    this.streams.delete(chatId);
  }
}

function wake(stream: MemoryStream): void {
  for (const waiter of [...stream.waiters]) waiter();
}
