import type { JournalTip } from './journal-writer';

/**
 * The tips a store remembers, by session id, so that a save appends a delta instead of a snapshot.
 * Bounded: the least recently used tip goes first; a session without a tip gets a snapshot at its
 * next save, which is correct, only larger.
 */
export class TipCache {
  private readonly tips = new Map<string, JournalTip>();

  constructor(private readonly capacity = 256) {}

  /** The tip of `sessionId` if it is the stored head (same version and generation). */
  get(sessionId: string, version: number | null, gen: string | null): JournalTip | null {
    const tip = this.tips.get(sessionId);
    if (!tip || tip.version !== version || tip.gen !== gen) return null;
    return tip;
  }

  /** The remembered tip of `sessionId`, whether or not it is still the stored head. */
  peek(sessionId: string): JournalTip | null {
    return this.tips.get(sessionId) ?? null;
  }

  set(sessionId: string, tip: JournalTip): void {
    this.tips.delete(sessionId);
    this.tips.set(sessionId, tip);
    if (this.tips.size > this.capacity) {
      const oldest = this.tips.keys().next().value;
      if (oldest !== undefined) this.tips.delete(oldest);
    }
  }

  delete(sessionId: string): void {
    this.tips.delete(sessionId);
  }

  clear(): void {
    this.tips.clear();
  }
}
