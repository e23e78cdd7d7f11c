/**
 * The prompt's tokens as the provider will count them: what it reported for the previous call,
 * plus the estimate (`estimateTextTokens`) of what changed since, scaled up by how much the
 * provider counted above the estimate for that call. Before the first report of a run, the
 * estimate alone.
 *
 * @example
 * const count = new TokenCount();
 * count.observe(1000, 1200); // the prompt estimated at 1000 was 1200 tokens for the provider
 * count.tokens(1100);        // 1320: 1200 reported + 100 more estimated, times 1.2
 */
export class TokenCount {
  #estimate: number | null = null;
  #reported = 0;

  /** The provider counted `reported` tokens for a prompt estimated at `estimate`. */
  observe(estimate: number, reported: number): void {
    if (!(reported > 0) || !(estimate > 0)) return;
    this.#estimate = estimate;
    this.#reported = reported;
  }

  /** The tokens of a prompt estimated at `estimate`. */
  tokens(estimate: number): number {
    if (this.#estimate === null) return estimate;
    return Math.ceil(this.#reported + (estimate - this.#estimate) * this.#ratio());
  }

  /** The largest estimate whose tokens stay within `tokens` (the inverse of `tokens`). */
  estimateFor(tokens: number): number {
    if (this.#estimate === null) return tokens;
    return Math.floor(this.#estimate + (tokens - this.#reported) / this.#ratio());
  }

  /** Never below 1: an estimate above the provider's count only compacts a little early. */
  #ratio(): number {
    return Math.max(1, this.#reported / (this.#estimate as number));
  }
}
