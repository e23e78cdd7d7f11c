/** Token usage and cost (in the currency of the user's pricing table, usually USD). */
export interface Usage {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  readonly cost: number;
}

const zero: Usage = Object.freeze({ inputTokens: 0, outputTokens: 0, totalTokens: 0, cost: 0 });

export const Usage = {
  zero,
  of(partial: Partial<Usage>): Usage {
    const inputTokens = partial.inputTokens ?? 0;
    const outputTokens = partial.outputTokens ?? 0;
    return Object.freeze({
      inputTokens,
      outputTokens,
      // counts that are not numbers (a driver's mistake) give no sum: the admission check names them
      totalTokens:
        partial.totalTokens ??
        (typeof inputTokens === 'number' && typeof outputTokens === 'number'
          ? inputTokens + outputTokens
          : Number.NaN),
      cost: partial.cost ?? 0,
    });
  },
  add(a: Usage, b: Usage): Usage {
    if (b === zero) return a;
    if (a === zero) return b;
    return Object.freeze({
      inputTokens: a.inputTokens + b.inputTokens,
      outputTokens: a.outputTokens + b.outputTokens,
      totalTokens: a.totalTokens + b.totalTokens,
      cost: a.cost + b.cost,
    });
  },
};
