import { expect } from 'vitest';
import type { BudgetLedger } from '../../../src/ledger/budget-ledger';
import { InMemoryBudgetLedger } from '../../../src/ledger/in-memory-budget-ledger';
import { createAgent } from '../../../src/runtime/create-agent';
import { type AgentState, AgentState as State } from '../../../src/state/agent-state';
import type { AgentStep } from '../../../src/state/agent-step';
import { ExecutionBudget } from '../../../src/state/execution-budget';
import { ExecutionStatus } from '../../../src/state/execution-status';
import { StopReason } from '../../../src/state/stop-reason';
import { add } from '../../support/agents';
import { answering, MAX_OUTPUT, PRICE } from './ledger-models';

/** The agent of the cap scenarios: each run wants 3 model calls (2 tool steps, then an answer). */
export function cappedAgent(ledger: BudgetLedger, modelId = 'm') {
  const model = answering(modelId, 2);
  const agent = createAgent({
    model,
    tools: { add },
    ledger,
    budget: new ExecutionBudget({ maxSteps: 10 }),
    modelOptions: { pricing: { [modelId]: PRICE }, callOptions: { maxOutputTokens: MAX_OUTPUT } },
  });
  return { agent, model };
}

/** The real cost of a run's first call: what the cap scenarios count "one call's worth" in. */
export async function firstCallCost(): Promise<number> {
  const { agent } = cappedAgent(new InMemoryBudgetLedger());
  const done = await agent.execute(State.empty().withUserMessage('hi'), { ledgerScopes: ['probe'] });
  return (done.steps()[0] as AgentStep).inferenceResponse().usage.cost;
}

/** Whether `state` was stopped by the ledger, at `scope`, and says so in its stop signal. */
export function stoppedByLedger(state: AgentState, scope: string): boolean {
  const signal = state.stopSignal();
  return (
    state.status() === ExecutionStatus.Stopped &&
    state.stopReason() === StopReason.TokenLimitReached &&
    signal?.context.limit === 'ledger' &&
    signal.context.scope === scope
  );
}

/**
 * `runs` runs at once under `scope`'s cap: spend at most the cap, no reservation left, every run
 * either completed or stopped by the ledger naming the scope, and the settled spend the sum of the
 * runs' real costs (and tokens).
 */
export async function expectCapHolds(
  ledger: BudgetLedger,
  scope: string,
  cap: number,
  states: readonly AgentState[],
): Promise<void> {
  const usage = await ledger.usage(scope);
  expect(usage.cost).toBeLessThanOrEqual(cap);
  expect(usage.reservedCost).toBe(0);
  expect(usage.reservedTokens).toBe(0);
  for (const state of states)
    expect(state.status() === ExecutionStatus.Completed || stoppedByLedger(state, scope)).toBe(true);
  expect(states.some((state) => stoppedByLedger(state, scope))).toBe(true);
  const realCost = states.reduce((sum, state) => sum + state.usage().cost, 0);
  expect(usage.cost).toBeCloseTo(realCost, 12);
  const realTokens = states.reduce((sum, state) => sum + state.usage().totalTokens, 0);
  expect(usage.tokens).toBe(realTokens);
}
