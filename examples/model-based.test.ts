/**
 * Model-based testing of your own agent configuration: every transition of the agent loop, run
 * against the real runtime with your hooks, with your assertions at every step.
 *
 *   npx vitest run examples/model-based.test.ts
 */
import { describe, expect, it } from 'vitest';
import { ExecutionBudget, type Hook } from '../src/index';
import { createAgentTestModel } from '../src/testing/index';

// The hook under test: it keeps an audit trail of steps in the state's metadata.
const audit: Hook = {
  name: 'audit',
  afterStep: (state) => {
    const trail = (state.metadata().audit as string[] | undefined) ?? [];
    return state.withMetadata('audit', [...trail, state.currentStep()?.stepType() ?? 'none']);
  },
};

const model = createAgentTestModel({
  hooks: [audit],
  probeHooks: false,
  budget: new ExecutionBudget({ maxSteps: 3 }),
  executions: 1,
});

describe('the audit hook, on every path of the loop', () => {
  for (const path of model.transitionPaths()) {
    it(path.description, async () => {
      let previous: readonly string[] = [];
      await path.run(({ state, snapshot }) => {
        const trail = (state.metadata().audit as string[] | undefined) ?? [];
        // the trail only grows: no entry is ever lost or rewritten
        expect(trail.slice(0, previous.length)).toEqual(previous);
        previous = trail;
        // a completed run's last entry is its final answer
        if (snapshot.value === 'completed') expect(trail.at(-1)).toBe('final_response');
      });
    });
  }
});
