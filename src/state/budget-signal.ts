import type { AgentState } from './agent-state';
import type { ExecutionBudget } from './execution-budget';
import { StopReason } from './stop-reason';
import { StopSignal } from './stop-signal';

export const BUDGET_GUARD = 'budgetGuard';

/**
 * The stop signal for the first limit of `budget` that `state` has used up (`used >= limit`), or
 * null. The runtime checks it before each step, so a run never starts a step it has no budget for.
 * Steps -> StepsLimitReached, tokens and cost -> TokenLimitReached, seconds and deadline ->
 * TimeLimitReached; the context's `limit` says which one (`maxSteps`, `maxCost`, `deadline`, ...).
 */
export function budgetSignal(budget: ExecutionBudget, state: AgentState, now: number): StopSignal | null {
  const steps = state.stepCount();
  if (budget.maxSteps !== null && steps >= budget.maxSteps) {
    return StopSignal.of(
      StopReason.StepsLimitReached,
      `Step limit reached: ${steps}/${budget.maxSteps}`,
      { limit: 'maxSteps', currentSteps: steps, maxSteps: budget.maxSteps },
      BUDGET_GUARD,
    );
  }
  const usage = state.usage();
  if (budget.maxTokens !== null && usage.totalTokens >= budget.maxTokens) {
    return StopSignal.of(
      StopReason.TokenLimitReached,
      `Token limit reached: ${usage.totalTokens}/${budget.maxTokens}`,
      { limit: 'maxTokens', totalTokens: usage.totalTokens, maxTotalTokens: budget.maxTokens },
      BUDGET_GUARD,
    );
  }
  if (budget.maxCost !== null && usage.cost >= budget.maxCost) {
    return StopSignal.of(
      StopReason.TokenLimitReached,
      `Cost limit reached: ${round(usage.cost)}/${budget.maxCost}`,
      { limit: 'maxCost', totalCost: usage.cost, maxCost: budget.maxCost },
      BUDGET_GUARD,
    );
  }
  const elapsed = (now - (state.execution()?.startedAtMs() ?? now)) / 1000;
  if (budget.maxSeconds !== null && elapsed >= budget.maxSeconds) {
    return StopSignal.of(
      StopReason.TimeLimitReached,
      `Time limit reached: ${round(elapsed)}s/${budget.maxSeconds}s`,
      { limit: 'maxSeconds', elapsedSeconds: elapsed, maxSeconds: budget.maxSeconds },
      BUDGET_GUARD,
    );
  }
  if (budget.deadline !== null && now >= budget.deadline.getTime()) {
    return StopSignal.of(
      StopReason.TimeLimitReached,
      `Deadline reached: ${budget.deadline.toISOString()}`,
      { limit: 'deadline', deadline: budget.deadline.toISOString(), now: new Date(now).toISOString() },
      BUDGET_GUARD,
    );
  }
  return null;
}

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}
