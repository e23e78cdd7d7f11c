/**
 * The shared benchmark workload: a scripted model that asks for one tool call per step for N-1
 * steps and answers on step N, and a trivial tool.
 */
import { z } from 'zod';
import {
  AgentState,
  AgentStep,
  createAgent,
  defineTool,
  ExecutionBudget,
  InferenceResponse,
  Message,
  type SessionStore,
  scriptedDriver,
  ToolExecution,
  Usage,
} from '../src/index';

export const echo = defineTool({
  description: 'Echo a number',
  inputSchema: z.object({ n: z.number() }),
  execute: ({ n }) => n,
});

export const usagePerStep = { inputTokens: 10, outputTokens: 5 };

export function libraryAgent(steps: number, store?: SessionStore) {
  return createAgent({
    store,
    driver: scriptedDriver([
      (state) =>
        state.stepCount() < steps - 1
          ? {
              toolCalls: [{ name: 'echo', args: { n: state.stepCount() }, id: `call-${state.stepCount()}` }],
              usage: usagePerStep,
            }
          : { text: 'done', usage: usagePerStep },
    ]),
    tools: { echo },
    budget: ExecutionBudget.unlimited(),
  });
}

export const question = () => AgentState.empty().withUserMessage('go');

/** The floor: the same state updates in a plain loop, no machine, no actors, no validation. */
export async function plainLoop(steps: number): Promise<AgentState> {
  let state = question().withExecutionStarted();
  for (let i = 0; i < steps; i++) {
    state = state.withStepStarted();
    const last = i === steps - 1;
    const call = { id: `call-${i}`, name: 'echo', args: { n: i } };
    const toolCalls = last ? [] : [call];
    let step = AgentStep.of({
      inputMessages: state.messageList(),
      outputMessages: [Message.assistant(last ? 'done' : '', toolCalls)],
      inferenceResponse: InferenceResponse.of({
        text: last ? 'done' : '',
        toolCalls,
        usage: Usage.of(usagePerStep),
      }),
    });
    if (!last) {
      const execution = ToolExecution.succeeded(
        call,
        await echo.execute?.({ n: i }, undefined as never),
        Date.now(),
      );
      step = step
        .withToolExecutions([execution])
        .withOutputMessages([...step.outputMessages(), Message.toolResult(call, String(i))]);
    }
    state = state.withCurrentStep(step).withCurrentStepRecorded();
  }
  return state.withExecutionCompleted();
}

/** Appends one recorded tool step (assistant call + tool result) to `state`: the unit of state.bench. */
export function appendToolStep(state: AgentState, n: number): AgentState {
  const call = { id: `call-${n}`, name: 'add', args: { a: n, b: 1 } };
  const step = AgentStep.of({
    inputMessages: state.messageList(),
    outputMessages: [Message.assistant('', [call]), Message.toolResult(call, String(n + 1))],
    inferenceResponse: InferenceResponse.of({
      toolCalls: [call],
      finishReason: 'tool-calls',
      usage: Usage.of({ inputTokens: 10, outputTokens: 5 }),
    }),
    toolExecutions: [ToolExecution.succeeded(call, n + 1, 0, 1)],
  });
  return state.withStepStarted().withCurrentStep(step).withCurrentStepRecorded();
}
