/**
 * The floor: `plainLoop` from bench/workload.ts, the same AgentState updates in a plain loop, with
 * no machine, no actors and no validation. It has no model, so its counters are read from the state.
 */
import type { AgentState } from '../../src/index';
import { plainLoop } from '../workload';
import { type Adapter, type Counters, expectRun } from './common';

const counters: Counters = { modelCalls: 0, toolCalls: 0 };

export const plainLoopAdapter: Adapter = {
  name: 'plain loop (floor)',
  version: 'bench/workload.ts plainLoop',
  counters,
  setup(steps) {
    return {
      async run() {
        const state: AgentState = await plainLoop(steps);
        const toolCalls = state.toolExecutions().filter((e) => e.error() === null).length;
        counters.modelCalls += state.stepCount();
        counters.toolCalls += toolCalls;
        expectRun('plain loop', steps, {
          modelCalls: state.stepCount(),
          toolCalls,
          text: state.finalResponse(),
        });
        return state;
      },
    };
  },
};
