/**
 * This library behind the AI SDK model boundary: `createAgent({ model })` (the model driver: the
 * conversation compiled to an AI SDK prompt each step, tool schemas as JSON Schema, arguments parsed
 * from JSON) with the same scripted `MockLanguageModelV4` the AI SDK adapter uses, the zod `echo`
 * tool of bench/workload.ts and an unlimited budget. The reference of the side-by-side table: it
 * compares with `generateText` model for model.
 */
import { createAgent, ExecutionBudget } from '../../src/index';
import { echo, question } from '../workload';
import { countingTool, expectState } from './agent-machine';
import { scriptedMockModel } from './ai-sdk';
import { type Adapter, type Counters, versionOf } from './common';

const counters: Counters = { modelCalls: 0, toolCalls: 0 };

export const agentMachineModelAdapter: Adapter = {
  name: 'agent-machine, model driver',
  version: `agent-machine (this repo) with ${versionOf('ai')} MockLanguageModelV4`,
  counters,
  setup(steps) {
    const agent = createAgent({
      model: scriptedMockModel(steps, counters),
      tools: { echo: countingTool(echo, counters) },
      budget: ExecutionBudget.unlimited(),
    });
    return {
      async run() {
        const state = await agent.execute(question());
        expectState('agent-machine, model driver', steps, state);
        return state;
      },
    };
  },
};
