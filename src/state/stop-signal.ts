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

/** Where a person's `stop` came: the place of the run it interrupted and the steps recorded by then. */
export interface StopPlace {
  readonly during: string;
  readonly stepCount: number;
}

/**
 * The signal a person's `stop` records (the `stop` event, an aborted `signal`): `user_requested`
 * from the source `'user'`, placed where it came. It is the one stop signal a continuation request
 * never overrides (a hook's own `user_requested` signal is one like any other, seed 000).
 */
export function personStop(message: string, at: StopPlace): StopSignal {
  return StopSignal.of('user_requested', message, { ...at }, 'user');
}

/** Whether `signal` is a person's stop (`personStop`), not a hook's `user_requested` signal. */
export function isPersonStop(signal: StopSignal): boolean {
  return (
    signal.reason === 'user_requested' &&
    signal.source === 'user' &&
    typeof signal.context.during === 'string' &&
    typeof signal.context.stepCount === 'number'
  );
}
