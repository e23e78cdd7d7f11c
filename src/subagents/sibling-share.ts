import { AgentMachineError } from '../state/errors';
import { ExecutionBudget } from '../state/execution-budget';
import type { Usage } from '../state/usage';

/** A subagent call of a step whose share of the caller's remainder cannot pay for a run. */
export class SubagentBudgetExhaustedError extends AgentMachineError {
  static override get name(): string {
    return 'SubagentBudgetExhaustedError';
  }

  constructor(
    readonly subagent: string,
    readonly affordable: number,
    readonly requested: number,
  ) {
    super(
      'SUBAGENT_BUDGET_EXHAUSTED',
      `Subagent '${subagent}' was not started: the budget left pays for ${affordable} of the ${requested} ` +
        'subagent calls of this step. Call fewer subagents at once, or do the task yourself.',
    );
  }
}

/**
 * The budget of the `index`-th of `siblings` parallel subagent calls of one step, out of what the
 * caller has `left`. A child stops once it has used its share, after the step that crossed it, so
 * each share keeps back the cost of one step (`perStep`: the calling step's own model call, the
 * best estimate there is) for that last step: parallel children together stay within the
 * remainder as long as their steps cost no more than the caller's. A call whose share could not
 * pay for one step and that reserve is refused (SubagentBudgetExhaustedError), the later calls
 * first; without a known step cost, tokens and cost are split evenly. A single call gets the whole
 * remainder: alone, it overshoots by at most its last step, as any agent does.
 *
 * @example
 * siblingShare('helper', new ExecutionBudget({ maxTokens: 900 }), 16, 0, Usage.of({ inputTokens: 100 }));
 * // maxTokens 125: 900 pays for 4 children of 225 each, 100 of it kept for the last step
 */
export function siblingShare(
  subagent: string,
  left: ExecutionBudget,
  siblings: number,
  index: number,
  perStep: Usage,
): ExecutionBudget {
  // One child alone overshoots by at most its last step, as any agent does: nothing to keep back.
  if (siblings <= 1) return left;
  const tokenStep = perStep.totalTokens > 0 ? perStep.totalTokens : null;
  const costStep = perStep.cost > 0 ? perStep.cost : null;
  // How many children the remainder pays for: each needs one step to work with and one in reserve.
  let affordable = siblings;
  if (left.maxTokens !== null && tokenStep !== null)
    affordable = Math.min(affordable, Math.floor(left.maxTokens / (2 * tokenStep)));
  if (left.maxCost !== null && costStep !== null)
    affordable = Math.min(affordable, Math.floor(left.maxCost / (2 * costStep)));
  if (index >= affordable)
    throw new SubagentBudgetExhaustedError(subagent, Math.max(0, affordable), siblings);
  const parts = Math.max(1, affordable);
  return new ExecutionBudget({
    maxSteps: left.maxSteps,
    maxTokens:
      left.maxTokens === null ? null : Math.max(0, Math.floor(left.maxTokens / parts) - (tokenStep ?? 0)),
    maxSeconds: left.maxSeconds,
    maxCost: left.maxCost === null ? null : Math.max(0, left.maxCost / parts - (costStep ?? 0)),
    deadline: left.deadline,
  });
}
