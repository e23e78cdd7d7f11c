/**
 * `{ covering: true }`: the fast tier's sample of a model's paths is deterministic, smaller than the
 * whole list, and its runs take every state and transition of the chart the whole list's runs take.
 */
import { describe, expect, it } from 'vitest';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { type AgentTestModelOptions, createAgentTestModel } from '../../src/testing/index';

const options: AgentTestModelOptions = {
  probeHooks: ['afterStep', 'onError'],
  probeStore: false,
  subagent: false,
  approvals: false,
  executions: 1,
  budget: new ExecutionBudget({ maxSteps: 2 }),
};

describe('a covering sample of the paths', () => {
  it('is the same sample every time, and fewer paths than the whole list', () => {
    const model = createAgentTestModel(options);
    const sample = model.transitionPaths({ covering: true }).map((p) => p.description);
    expect(
      createAgentTestModel(options)
        .transitionPaths({ covering: true })
        .map((p) => p.description),
    ).toEqual(sample);
    expect(sample.length).toBeGreaterThan(0);
    expect(sample.length).toBeLessThan(model.transitionPaths().length / 2);
  });

  it('takes every state and transition of the chart that every path takes', async () => {
    const whole = createAgentTestModel(options);
    for (const path of whole.transitionPaths()) await path.run();
    const sampled = createAgentTestModel(options);
    for (const path of sampled.transitionPaths({ covering: true })) await path.run();
    const { missingStates, missingTransitions } = sampled.coverage();
    expect(missingStates).toEqual(whole.coverage().missingStates);
    expect(missingTransitions).toEqual(whole.coverage().missingTransitions);
  }, 120_000);
});
