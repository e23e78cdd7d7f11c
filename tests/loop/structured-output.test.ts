import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import { StopReason } from '../../src/state/stop-reason';

const Answer = z.object({ city: z.string(), celsius: z.number() });
const ask = () => AgentState.empty().withUserMessage('Warmest city?');

describe('structured output (responseFormat)', () => {
  it('parses a valid final answer beside the text, and gives the model the JSON Schema', async () => {
    const text = '{"city":"Lisbon","celsius":24}';
    const agent = createAgent({ driver: scriptedDriver([{ text }]), responseFormat: Answer });
    const state = await agent.execute(ask());
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.finalResponse()).toBe(text);
    expect(state.structuredOutput()).toEqual({ city: 'Lisbon', celsius: 24 });
    expect(state.responseFormat()).toMatchObject({
      type: 'json',
      schema: { type: 'object', required: ['city', 'celsius'] },
    });
    expect(AgentState.fromJSON(JSON.parse(JSON.stringify(state))).structuredOutput()).toEqual({
      city: 'Lisbon',
      celsius: 24,
    });
  });

  it('tolerates a ```json fence around the answer', async () => {
    const agent = createAgent({
      driver: scriptedDriver([{ text: '```json\n{"city":"Oslo","celsius":7}\n```' }]),
      responseFormat: Answer,
    });
    expect((await agent.execute(ask())).structuredOutput()).toEqual({ city: 'Oslo', celsius: 7 });
  });

  it('turns an invalid answer into a step error the model is told about, and completes once it corrects', async () => {
    const driver = scriptedDriver([
      { text: 'Lisbon, 24 degrees' },
      { text: '{"city":"Lisbon"}' },
      { text: '{"city":"Lisbon","celsius":24}' },
    ]);
    const state = await createAgent({ driver, responseFormat: Answer }).execute(ask());
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.steps().map((s) => s.stepType())).toEqual(['error', 'error', 'final_response']);
    expect(state.steps()[0]?.errors()[0]).toMatchObject({
      name: 'StructuredOutputInvalid',
      code: 'INVALID_STRUCTURED_OUTPUT',
    });
    expect(state.steps()[1]?.errors()[0]?.message).toContain('celsius');
    expect(state.messages().map((m) => m.role)).toEqual([
      'user',
      'assistant',
      'user',
      'assistant',
      'user',
      'assistant',
    ]);
    expect(state.messages()[2]?.content).toContain('does not match the required response format');
    expect(state.structuredOutput()).toEqual({ city: 'Lisbon', celsius: 24 });
  });

  it('fails with RetryLimitReached when the model never answers in the format', async () => {
    const state = await createAgent({
      driver: scriptedDriver([{ text: 'no json' }]),
      responseFormat: Answer,
    }).execute(ask());
    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.stopReason()).toBe(StopReason.RetryLimitReached);
    expect(state.stepCount()).toBe(3);
    expect(state.structuredOutput()).toBeNull();
  });
});
