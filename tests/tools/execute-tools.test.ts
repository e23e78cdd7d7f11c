/**
 * Seed 004: "CanExecuteToolCalls unchanged (returns ToolExecution/ToolExecutions)"; DESIGN: "Tool
 * execution returns ToolExecution records." `executeTools` returns the records; `runTools` (seed
 * 004's CanUseTools: state in, state out) returns the state with them on the step in flight.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AgentState } from '../../src/state/agent-state';
import { AgentStep, InferenceResponse } from '../../src/state/agent-step';
import { ToolExecution } from '../../src/state/tool-execution';
import { defineTool } from '../../src/tools/define-tool';
import { executeTools, runTools } from '../../src/tools/tool-executor';
import { add } from '../support/agents';

const slowEcho = defineTool({
  description: 'Echo, slowly for the first call',
  inputSchema: z.object({ text: z.string() }),
  execute: async ({ text }) => {
    if (text === 'first') await new Promise((resolve) => setImmediate(resolve));
    return text;
  },
});

/** A state whose step in flight asked for these calls. */
function askedFor(toolCalls: { id: string; name: string; args: unknown }[]): AgentState {
  return AgentState.empty()
    .withUserMessage('Go')
    .withExecutionStarted()
    .withStepStarted()
    .withCurrentStep(AgentStep.of({ inferenceResponse: InferenceResponse.of({ toolCalls }) }));
}

const options = () => ({ tools: { add, echo: slowEcho }, hooks: [], signal: new AbortController().signal });

describe('the tool executor returns ToolExecution records (seed 004: CanExecuteToolCalls unchanged)', () => {
  it('executeTools returns one ToolExecution per call, in the order the model asked for them', async () => {
    const state = askedFor([
      { id: 'c1', name: 'echo', args: { text: 'first' } },
      { id: 'c2', name: 'add', args: { a: 2, b: 3 } },
      { id: 'c3', name: 'nope', args: {} },
    ]);
    const records = await executeTools(state, options());
    expect(Array.isArray(records)).toBe(true);
    expect(records.every((r) => r instanceof ToolExecution)).toBe(true);
    expect(records.map((r) => r.toolCallId())).toEqual(['c1', 'c2', 'c3']);
    expect(records.map((r) => r.value())).toEqual(['first', 5, null]);
    expect(records[2]?.hasError()).toBe(true);
  });

  it('executeTools returns no records for a state with no tool calls in flight', async () => {
    expect(await executeTools(AgentState.empty().withUserMessage('Go'), options())).toEqual([]);
  });

  it('runTools (seed 004: CanUseTools returns AgentState) returns the state with the records and tool messages', async () => {
    const state = askedFor([{ id: 'c1', name: 'add', args: { a: 1, b: 1 } }]);
    const done = await runTools(state, options());
    expect(done).toBeInstanceOf(AgentState);
    expect(
      done
        .currentStep()
        ?.toolExecutions()
        .map((e) => e.value()),
    ).toEqual([2]);
    expect(
      done
        .currentStep()
        ?.outputMessages()
        .map((m) => m.role),
    ).toEqual(['tool']);
  });
});
