/** What writing one member of a batch came to: its value, or the error that member alone fails with. */
export type Written<R> =
  | { readonly ok: true; readonly value: R }
  | { readonly ok: false; readonly error: unknown };

interface Waiter<T, R> {
  readonly item: T;
  readonly resolve: (value: R) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Group commit, the classic leader/follower kind: the writes of callers saving at the same moment
 * share one flush to disk. A write submitted while nothing is being flushed is written and flushed
 * at once (its caller leads); the writes submitted while a flush is in flight wait for it, then are
 * written together (`write` gets them all: one transaction) and flushed once, and so on until none
 * is left. No timer: a write alone is never held back.
 *
 * Each member is acknowledged only after a flush that began once it was written. A member that
 * `write` reports as failed (a version conflict) fails alone, at once; an error thrown by `write`
 * (nothing of the batch written) or by `flush` fails every member it covers.
 */
export class GroupCommit<T, R> {
  private pending: Waiter<T, R>[] = [];
  private leading: Promise<void> = Promise.resolve();
  private busy = false;

  constructor(
    /** Writes a batch (synchronously), one outcome per item in order; throws if none is written. */
    private readonly write: (items: readonly T[]) => readonly Written<R>[],
    /** Makes everything written so far survive a power loss. */
    private readonly flush: () => Promise<void>,
  ) {}

  submit(item: T): Promise<R> {
    const acknowledged = new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
    });
    // Its body runs now, up to the first flush: a write alone is written and flushed at once.
    if (!this.busy) this.leading = this.lead();
    return acknowledged;
  }

  /** Resolves once nothing is waiting or being flushed (before a store closes its database). */
  async idle(): Promise<void> {
    while (this.busy) await this.leading;
  }

  private async lead(): Promise<void> {
    this.busy = true;
    try {
      while (this.pending.length > 0) {
        const batch = this.pending;
        this.pending = [];
        const written = this.writeBatch(batch);
        if (written.length === 0) continue;
        try {
          await this.flush();
        } catch (error) {
          for (const [waiter] of written) waiter.reject(error);
          continue;
        }
        for (const [waiter, value] of written) waiter.resolve(value);
      }
    } finally {
      // Cleared in the same turn as the last look at `pending`: a write submitted after it leads.
      this.busy = false;
    }
  }

  /** The members written, with their values; the others are rejected now. */
  private writeBatch(batch: readonly Waiter<T, R>[]): [Waiter<T, R>, R][] {
    let outcomes: readonly Written<R>[];
    try {
      outcomes = this.write(batch.map((waiter) => waiter.item));
    } catch (error) {
      for (const waiter of batch) waiter.reject(error);
      return [];
    }
    const written: [Waiter<T, R>, R][] = [];
    batch.forEach((waiter, i) => {
      const outcome = outcomes[i];
      if (!outcome) waiter.reject(new Error(`group commit: no outcome for member ${i} of ${batch.length}`));
      else if (outcome.ok) written.push([waiter, outcome.value]);
      else waiter.reject(outcome.error);
    });
    return written;
  }
}
