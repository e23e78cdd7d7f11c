import { type StopReason, stopReasonPriority } from './stop-reason';

/** A request to stop, with the reason, a human message, context values and who raised it. */
export interface StopSignal {
  readonly reason: StopReason;
  readonly message: string;
  readonly context: Readonly<Record<string, unknown>>;
  readonly source: string;
}

export const StopSignal = {
  of(reason: StopReason, message = '', context: Record<string, unknown> = {}, source = ''): StopSignal {
    return Object.freeze({ reason, message, context: Object.freeze({ ...context }), source });
  },
  userRequested(message = 'Stopped by user request', source = 'user'): StopSignal {
    return StopSignal.of('user_requested', message, {}, source);
  },
  /** The signal of highest priority (lowest number); on a tie the earliest wins. */
  highest(signals: Iterable<StopSignal>): StopSignal | null {
    let best: StopSignal | null = null;
    for (const signal of signals) {
      if (best === null || stopReasonPriority(signal.reason) < stopReasonPriority(best.reason)) best = signal;
    }
    return best;
  },
};
