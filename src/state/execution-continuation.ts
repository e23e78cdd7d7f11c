import { frozenList } from './frozen-list';
import { type ContinuationJSON, continuationSchema } from './schemas';
import { StopSignal } from './stop-signal';
import { validate } from './validation';

/**
 * Stop signals raised so far in the execution, and whether a hook asked to go on anyway. Signals
 * accumulate over the execution; the continuation request covers the current step only.
 */
export class ExecutionContinuation {
  static fromJSON(data: unknown): ExecutionContinuation {
    return ExecutionContinuation.fromParsed(validate(continuationSchema, data, 'ExecutionContinuation'));
  }

  /** @internal from a validated document, or the part of one that holds it */
  static fromParsed(json: ContinuationJSON): ExecutionContinuation {
    const signals = json.stopSignals.map((s) => StopSignal.of(s.reason, s.message, s.context, s.source));
    return ExecutionContinuation.of(signals, json.continuationRequested);
  }

  private constructor(
    readonly stopSignals: readonly StopSignal[],
    readonly continuationRequested: boolean,
  ) {}

  static fresh(): ExecutionContinuation {
    return emptyContinuation;
  }

  static of(stopSignals: readonly StopSignal[], continuationRequested: boolean): ExecutionContinuation {
    return new ExecutionContinuation(frozenList(stopSignals), continuationRequested);
  }

  withStopSignal(signal: StopSignal): ExecutionContinuation {
    return new ExecutionContinuation(
      Object.freeze([...this.stopSignals, signal]),
      this.continuationRequested,
    );
  }

  withContinuationRequested(requested = true): ExecutionContinuation {
    if (requested === this.continuationRequested) return this;
    return new ExecutionContinuation(this.stopSignals, requested);
  }

  hasStopSignals(): boolean {
    return this.stopSignals.length > 0;
  }

  isContinuationRequested(): boolean {
    return this.continuationRequested;
  }

  /** A stop signal exists and no continuation was requested. */
  shouldStop(): boolean {
    return this.stopSignals.length > 0 && !this.continuationRequested;
  }

  highestStopSignal(): StopSignal | null {
    return StopSignal.highest(this.stopSignals);
  }

  describe(): string {
    const signals = this.stopSignals.length
      ? `Stop Signals: ${this.stopSignals.map((s) => s.reason).join(', ')}`
      : 'No Stop Signals';
    return `${signals}; Continuation Requested: ${this.continuationRequested ? 'Yes' : 'No'}`;
  }

  toJSON() {
    return { stopSignals: this.stopSignals, continuationRequested: this.continuationRequested };
  }
}

const emptyContinuation = ExecutionContinuation.of([], false);
