/**
 * This library: `libraryAgent(N)` and `question()` from bench/workload.ts (scripted driver, the
 * zod `echo` tool, unlimited budget). The driver and the tool are wrapped only to count calls.
 */
import { type AgentState, createAgent, type Driver, type Tool } from '../../src/index';
import { libraryAgent, question } from '../workload';
import { type Adapter, type Counters, expectRun, versionOf } from './common';

const counters: Counters = { modelCalls: 0, toolCalls: 0 };

function countingDriver(driver: Driver, counts: Counters): Driver {
  return {
    name: driver.name,
    infer(state, context) {
      counts.modelCalls++;
      return driver.infer(state, context);
    },
  };
}

export function countingTool(tool: Tool, counts: Counters): Tool {
  return {
    ...tool,
    execute(input, options) {
      counts.toolCalls++;
      return tool.execute?.(input, options);
    },
  };
}

/** Checks a final state: N steps, N - 1 successful echo calls that returned their n, the answer. */
export function expectState(adapter: string, steps: number, state: AgentState): void {
  if (state.status() !== 'completed') throw new Error(`${adapter}: run ended ${state.status()}`);
  const executions = state.toolExecutions();
  executions.forEach((e, i) => {
    if (e.error() !== null || e.value() !== i)
      throw new Error(`${adapter}: tool call ${i} returned ${e.value()}`);
  });
  expectRun(adapter, steps, {
    modelCalls: state.stepCount(),
    toolCalls: executions.length,
    text: state.finalResponse(),
  });
}

export const agentMachineAdapter: Adapter = {
  name: 'agent-machine',
  version: `agent-machine (this repo), ${versionOf('xstate')}, ${versionOf('zod')}`,
  counters,
  setup(steps) {
    const { definition } = libraryAgent(steps);
    const agent = createAgent({
      ...definition,
      driver: countingDriver(definition.driver!, counters),
      tools: Object.fromEntries(
        Object.entries(definition.tools ?? {}).map(([name, tool]) => [name, countingTool(tool, counters)]),
      ),
    });
    return {
      async run() {
        const state = await agent.execute(question());
        expectState('agent-machine', steps, state);
        return state;
      },
    };
  },
};
