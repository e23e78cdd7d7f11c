import { APICallError, type LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { AgentState, createAgent, ExecutionStatus, StopReason } from '../../src/index';
import { add } from '../support/agents';

const usage = (input: number, output: number): LanguageModelV4GenerateResult['usage'] => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});
const toolCall = (id: string, a: number, b: number): LanguageModelV4GenerateResult => ({
  content: [{ type: 'tool-call', toolCallId: id, toolName: 'add', input: JSON.stringify({ a, b }) }],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage: usage(10, 5),
  warnings: [],
});
const text = (value: string): LanguageModelV4GenerateResult => ({
  content: [{ type: 'text', text: value }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage: usage(20, 2),
  warnings: [],
});

describe('the model driver (AI SDK LanguageModel)', () => {
  it('runs a tool loop against a mock model and sends the conversation, tools and results', async () => {
    const model = new MockLanguageModelV4({ doGenerate: [toolCall('c1', 2, 3), text('5')] });
    const agent = createAgent({ model, tools: { add }, systemPrompt: 'You add numbers.' });
    const state = await agent.execute(AgentState.empty().withUserMessage('What is 2 + 3?'));

    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.finalResponse()).toBe('5');
    expect(state.stepCount()).toBe(2);
    expect(state.usage()).toEqual({ inputTokens: 30, outputTokens: 7, totalTokens: 37, cost: 0 });
    expect(state.steps()[0]?.finishReason()).toBe('tool-calls');

    const [first, second] = model.doGenerateCalls;
    expect(first?.prompt).toEqual([
      { role: 'system', content: 'You add numbers.' },
      { role: 'user', content: [{ type: 'text', text: 'What is 2 + 3?' }] },
    ]);
    expect(first?.tools).toEqual([
      expect.objectContaining({
        type: 'function',
        name: 'add',
        description: 'Add two numbers',
        inputSchema: expect.objectContaining({ type: 'object', required: ['a', 'b'] }),
      }),
    ]);
    expect(second?.prompt.slice(2)).toEqual([
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: { a: 2, b: 3 } }],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'add', output: { type: 'text', value: '5' } },
        ],
      },
    ]);
    expect(first?.abortSignal).toBeInstanceOf(AbortSignal);
  });

  it('computes cost per step from a pricing table, feeding maxCost', async () => {
    const model = new MockLanguageModelV4({ modelId: 'm-1', doGenerate: [toolCall('c1', 1, 1), text('2')] });
    const agent = createAgent({
      model,
      tools: { add },
      modelOptions: { pricing: { 'm-1': { inputPerMillion: 1_000, outputPerMillion: 2_000 } } },
    });
    const state = await agent.execute(AgentState.empty().withUserMessage('1 + 1?'));
    // (10 * 1000 + 5 * 2000) / 1e6 + (20 * 1000 + 2 * 2000) / 1e6
    expect(state.usage().cost).toBeCloseTo(0.02 + 0.024);
  });

  it('does not retry an error the provider marks as not retryable, and records it on the step', async () => {
    let calls = 0;
    const model = new MockLanguageModelV4({
      doGenerate: async () => {
        calls++;
        throw new APICallError({
          message: 'Bad request: unknown model',
          url: 'http://127.0.0.1/x',
          requestBodyValues: {},
          statusCode: 400,
        });
      },
    });
    const state = await createAgent({ model }).execute(AgentState.empty().withUserMessage('hi'));
    expect(calls).toBe(1);
    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.stopReason()).toBe(StopReason.ErrorForbade);
    expect(state.lastStep()?.errors()[0]).toMatchObject({
      name: 'AI_APICallError',
      message: 'Bad request: unknown model',
      details: { statusCode: 400 },
    });
  });

  it('retries a retryable error (429) with backoff, then succeeds', async () => {
    let calls = 0;
    const model = new MockLanguageModelV4({
      doGenerate: async () => {
        calls++;
        if (calls < 3) {
          throw new APICallError({
            message: 'Rate limited',
            url: 'http://127.0.0.1/x',
            requestBodyValues: {},
            statusCode: 429,
          });
        }
        return text('ok');
      },
    });
    const agent = createAgent({ model, modelOptions: { retryDelayMs: 1 } });
    const state = await agent.execute(AgentState.empty().withUserMessage('hi'));
    expect(calls).toBe(3);
    expect(state.finalResponse()).toBe('ok');
  });
});
