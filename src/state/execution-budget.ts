import { InvalidArgumentError, shownValue } from './errors';

export interface BudgetLimits {
  readonly maxSteps?: number | null;
  readonly maxTokens?: number | null;
  readonly maxSeconds?: number | null;
  readonly maxCost?: number | null;
  readonly deadline?: Date | string | number | null;
}

/** What has been spent so far against a budget. */
export interface BudgetUsage {
  readonly stepsUsed?: number;
  readonly tokensUsed?: number;
  readonly secondsUsed?: number;
  readonly costUsed?: number;
}

/**
 * Limits for one execution: steps, tokens, seconds, cost and an absolute deadline; `null` means
 * unlimited. It belongs to an agent definition, not to AgentState.
 *
 * @example
 * const budget = new ExecutionBudget({ maxSteps: 20, maxTokens: 10_000 });
 * budget.remaining({ stepsUsed: 5, tokensUsed: 3_000 }).maxSteps; // 15
 */
export class ExecutionBudget {
  readonly maxSteps: number | null;
  readonly maxTokens: number | null;
  readonly maxSeconds: number | null;
  readonly maxCost: number | null;
  readonly deadline: Date | null;

  constructor(limits: BudgetLimits = {}) {
    this.maxSteps = checkLimit('ExecutionBudget.maxSteps', limits.maxSteps, true);
    this.maxTokens = checkLimit('ExecutionBudget.maxTokens', limits.maxTokens, true);
    this.maxSeconds = checkLimit('ExecutionBudget.maxSeconds', limits.maxSeconds, false);
    this.maxCost = checkLimit('ExecutionBudget.maxCost', limits.maxCost, false);
    this.deadline = checkDeadline(limits.deadline);
    Object.freeze(this);
  }

  static unlimited(): ExecutionBudget {
    return new ExecutionBudget();
  }

  /** The budget `createAgent` uses when none is given: 20 steps, nothing else limited. */
  static default(): ExecutionBudget {
    return new ExecutionBudget({ maxSteps: 20 });
  }

  /** No limit is set. */
  isEmpty(): boolean {
    return (
      this.maxSteps === null &&
      this.maxTokens === null &&
      this.maxSeconds === null &&
      this.maxCost === null &&
      this.deadline === null
    );
  }

  /** The name of the first limit that `used` reaches (`used >= limit`), or null. */
  exhaustedLimit(used: BudgetUsage, now: number = Date.now()): keyof BudgetLimits | null {
    if (this.maxSteps !== null && (used.stepsUsed ?? 0) >= this.maxSteps) return 'maxSteps';
    if (this.maxTokens !== null && (used.tokensUsed ?? 0) >= this.maxTokens) return 'maxTokens';
    if (this.maxSeconds !== null && (used.secondsUsed ?? 0) >= this.maxSeconds) return 'maxSeconds';
    if (this.maxCost !== null && (used.costUsed ?? 0) >= this.maxCost) return 'maxCost';
    if (this.deadline !== null && now >= this.deadline.getTime()) return 'deadline';
    return null;
  }

  /** True when any limit is used up, so no further step may start. */
  isExhausted(used: BudgetUsage = {}, now: number = Date.now()): boolean {
    return this.exhaustedLimit(used, now) !== null;
  }

  /** What is left after `used`, floored at zero; the deadline is unchanged. */
  remaining(used: BudgetUsage = {}): ExecutionBudget {
    const left = (limit: number | null, spent = 0) => (limit === null ? null : Math.max(0, limit - spent));
    return new ExecutionBudget({
      maxSteps: left(this.maxSteps, used.stepsUsed),
      maxTokens: left(this.maxTokens, used.tokensUsed),
      maxSeconds: left(this.maxSeconds, used.secondsUsed),
      maxCost: left(this.maxCost, used.costUsed),
      deadline: this.deadline,
    });
  }

  /** Tokens and cost divided between `parts` parallel consumers; steps, seconds and deadline stay. */
  withShares(parts: number): ExecutionBudget {
    if (parts <= 1) return this;
    const share = (limit: number | null, whole: boolean) =>
      limit === null ? null : whole ? Math.floor(limit / parts) : limit / parts;
    return new ExecutionBudget({
      maxSteps: this.maxSteps,
      maxTokens: share(this.maxTokens, true),
      maxSeconds: this.maxSeconds,
      maxCost: share(this.maxCost, false),
      deadline: this.deadline,
    });
  }

  /** The tighter of each limit of this budget and `other`; the earlier deadline. */
  cappedBy(other: ExecutionBudget): ExecutionBudget {
    const min = (a: number | null, b: number | null) => (a === null ? b : b === null ? a : Math.min(a, b));
    const deadline =
      this.deadline === null
        ? other.deadline
        : other.deadline === null
          ? this.deadline
          : new Date(Math.min(this.deadline.getTime(), other.deadline.getTime()));
    return new ExecutionBudget({
      maxSteps: min(this.maxSteps, other.maxSteps),
      maxTokens: min(this.maxTokens, other.maxTokens),
      maxSeconds: min(this.maxSeconds, other.maxSeconds),
      maxCost: min(this.maxCost, other.maxCost),
      deadline,
    });
  }

  toJSON() {
    return {
      maxSteps: this.maxSteps,
      maxTokens: this.maxTokens,
      maxSeconds: this.maxSeconds,
      maxCost: this.maxCost,
      deadline: this.deadline?.toISOString() ?? null,
    };
  }

  static fromJSON(data: unknown): ExecutionBudget {
    if (typeof data !== 'object' || data === null || Array.isArray(data)) {
      throw new InvalidArgumentError('ExecutionBudget', `expected an object, got ${JSON.stringify(data)}`);
    }
    return new ExecutionBudget(data as BudgetLimits);
  }
}

/**
 * A limit: absent (`null`), or a finite number >= 0 (a whole one when `integer`); else
 * `InvalidArgumentError` naming `argument`. Shared by the budget ledger's limits.
 */
export function checkLimit(argument: string, value: unknown, integer: boolean): number | null {
  if (value === undefined || value === null) return null;
  if (
    typeof value !== 'number' ||
    !Number.isFinite(value) ||
    value < 0 ||
    (integer && !Number.isInteger(value))
  ) {
    const kind = integer ? 'a whole number >= 0' : 'a finite number >= 0';
    throw new InvalidArgumentError(argument, `expected ${kind} or null, got ${shownValue(value)}`);
  }
  return value;
}

function checkDeadline(value: unknown): Date | null {
  if (value === undefined || value === null) return null;
  const date =
    value instanceof Date
      ? new Date(value.getTime())
      : typeof value === 'string' || typeof value === 'number'
        ? new Date(value)
        : null;
  if (date === null || Number.isNaN(date.getTime())) {
    throw new InvalidArgumentError(
      'ExecutionBudget.deadline',
      `expected a Date, ISO string or epoch ms, got ${shownValue(value)}`,
    );
  }
  return date;
}
