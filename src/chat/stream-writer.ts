import type { UIMessageChunk } from '../ui/ui-message';
import type { StreamStore } from './stream-store';

export interface StreamWriterOptions {
  /** Chunks are written in batches at most this often, in ms (text deltas come many a second). Default 20. */
  readonly flushMs?: number;
  /** Gets a write that failed; the writer stops writing after it. Default: `console.error`. */
  readonly onError?: (error: unknown) => void;
}

/**
 * Writes one run's UI message chunks to a StreamStore in order, batched by time: the first chunk
 * of a batch starts a `flushMs` timer, and everything that came meanwhile goes in one `append`
 * (one XADD for Redis). `end()` writes what is left and ends the stream.
 */
export class StreamWriter {
  private buffer: UIMessageChunk[] = [];
  private timer: ReturnType<typeof setTimeout> | null = null;
  private writing: Promise<void> = Promise.resolve();
  private failed = false;
  /** Batches written so far (appends to the store). */
  appends = 0;
  private readonly flushMs: number;
  private readonly onError: (error: unknown) => void;

  constructor(
    private readonly store: StreamStore,
    readonly chatId: string,
    readonly streamId: string,
    options: StreamWriterOptions = {},
  ) {
    this.flushMs = options.flushMs ?? 20;
    this.onError = options.onError ?? ((error: unknown) => console.error(error));
  }

  write(chunk: UIMessageChunk): void {
    if (this.failed) return;
    this.buffer.push(chunk);
    if (this.timer === null) {
      this.timer = setTimeout(() => void this.flush(), this.flushMs);
      this.timer.unref?.();
    }
  }

  /** Writes what is buffered; resolves once every earlier write is done. */
  flush(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const batch = this.buffer;
    this.buffer = [];
    if (batch.length > 0 && !this.failed) {
      this.appends++;
      this.writing = this.writing.then(() =>
        this.failed
          ? undefined
          : this.store.append(this.chatId, this.streamId, batch).catch((error: unknown) => {
              this.failed = true;
              this.onError(error);
            }),
      );
    }
    return this.writing;
  }

  /** Writes what is left, then ends the stream (also after a failed write, so readers finish). */
  async end(): Promise<void> {
    await this.flush();
    await this.store.end(this.chatId, this.streamId);
  }
}
