import type { AgentState } from '../state/agent-state';
import { StopReason } from '../state/stop-reason';
import { StopSignal } from '../state/stop-signal';
import type { Hook } from './hook';

export interface ErrorPolicyOptions {
  /** Error steps in a row that end the run Failed with RetryLimitReached. Default 3. */
  readonly maxConsecutiveErrorSteps?: number;
}

/**
 * Failed tool calls go back to the model, which may recover; this policy ends the run when it
 * does not: after `maxConsecutiveErrorSteps` error steps in a row, Failed with RetryLimitReached.
 */
export function errorPolicy(options: ErrorPolicyOptions = {}): Hook {
  const limit = options.maxConsecutiveErrorSteps ?? 3;
  return {
    name: 'errorPolicy',
    afterStep: (state) => {
      const streak = consecutiveErrorSteps(state);
      if (streak < limit) return undefined;
      // The signal, not the status, fails the run. A continuation the step asked for (a ReAct
      // parse error, an invalid structured answer) is withdrawn: the policy has the last word.
      return state
        .withContinuationRequested(false)
        .withStopSignal(
          StopSignal.of(
            StopReason.RetryLimitReached,
            `Error limit reached: ${streak} consecutive error steps (limit ${limit})`,
            { consecutiveErrorSteps: streak, maxConsecutiveErrorSteps: limit },
            'errorPolicy',
          ),
        );
    },
  };
}

/** Error steps at the end of the execution, the step in flight included. */
export function consecutiveErrorSteps(state: AgentState): number {
  let count = state.currentStep()?.stepType() === 'error' ? 1 : 0;
  if (state.currentStep() && count === 0) return 0;
  const list = state.execution()?.stepExecutionList();
  if (!list) return count;
  for (let i = list.size - 1; i >= 0; i--) {
    if (list.at(i)?.step().stepType() !== 'error') break;
    count++;
  }
  return count;
}
