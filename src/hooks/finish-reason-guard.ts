import { StopReason } from '../state/stop-reason';
import { StopSignal } from '../state/stop-signal';
import type { Hook } from './hook';

/**
 * Stops after a step whose model finish reason is one of `reasons` (for example `length` or
 * `content-filter`), with FinishReasonReceived: a natural end, so the run is Completed.
 */
export function finishReasonGuard(reasons: readonly string[]): Hook {
  const wanted = new Set(reasons);
  return {
    name: 'finishReasonGuard',
    afterStep: (state) => {
      const finishReason = state.currentStep()?.finishReason();
      if (!finishReason || !wanted.has(finishReason)) return undefined;
      return state.withStopSignal(
        StopSignal.of(
          StopReason.FinishReasonReceived,
          `Finish reason received: ${finishReason}`,
          { finishReason, stopReasons: [...wanted] },
          'finishReasonGuard',
        ),
      );
    },
  };
}
