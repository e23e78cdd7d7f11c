import { APICallError as APICallErrorV4 } from '@ai-sdk/provider';
import { MockLanguageModelV4, convertArrayToReadableStream as streamV4 } from 'ai/test';
import { MockLanguageModelV3, convertArrayToReadableStream as streamV3 } from 'ai6/test';
import { APICallError as APICallErrorV3 } from 'provider3';
import { describe, expect, it } from 'vitest';
import { type LanguageModel, UnsupportedModelError } from '../../src/drivers/language-model';
import { modelDriver } from '../../src/drivers/model-driver';
import { InvalidDefinitionError } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import { add } from '../support/agents';

const usage = (input: number, output: number) => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});
const toolCallResult = (id: string, a: number, b: number) => ({
  content: [{ type: 'tool-call' as const, toolCallId: id, toolName: 'add', input: JSON.stringify({ a, b }) }],
  finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
  usage: usage(10, 5),
  warnings: [],
});
const textResult = (text: string) => ({
  content: [{ type: 'text' as const, text }],
  finishReason: { unified: 'stop' as const, raw: 'stop' },
  usage: usage(20, 2),
  warnings: [],
});
const toolCallStream = (id: string, a: number, b: number) => [
  { type: 'stream-start' as const, warnings: [] },
  { type: 'tool-call' as const, toolCallId: id, toolName: 'add', input: JSON.stringify({ a, b }) },
  {
    type: 'finish' as const,
    finishReason: { unified: 'tool-calls' as const, raw: 'tool_calls' },
    usage: usage(10, 5),
  },
];
const textStream = (...deltas: string[]) => [
  { type: 'text-start' as const, id: 't' },
  ...deltas.map((delta) => ({ type: 'text-delta' as const, id: 't', delta })),
  { type: 'text-end' as const, id: 't' },
  { type: 'finish' as const, finishReason: { unified: 'stop' as const, raw: 'stop' }, usage: usage(20, 2) },
];

type Result = ReturnType<typeof textResult> | ReturnType<typeof toolCallResult>;
type StreamParts = Array<ReturnType<typeof textStream>[number] | ReturnType<typeof toolCallStream>[number]>;

/** One mock model per AI SDK major, built from the same script. */
const majors = [
  {
    name: 'AI SDK 6 (LanguageModelV3)',
    generating: (results: Result[]) => new MockLanguageModelV3({ doGenerate: results }),
    streaming: (streams: StreamParts[]) =>
      new MockLanguageModelV3({ doStream: streams.map((parts) => ({ stream: streamV3(parts) })) }),
    failingOnce: (error: { statusCode: number }, result: Result) => {
      let calls = 0;
      return new MockLanguageModelV3({
        doGenerate: async () => {
          if (calls++ === 0)
            throw new APICallErrorV3({
              message: 'Failed',
              url: 'http://127.0.0.1/x',
              requestBodyValues: {},
              ...error,
            });
          return result;
        },
      });
    },
  },
  {
    name: 'AI SDK 7 (LanguageModelV4)',
    generating: (results: Result[]) => new MockLanguageModelV4({ doGenerate: results }),
    streaming: (streams: StreamParts[]) =>
      new MockLanguageModelV4({ doStream: streams.map((parts) => ({ stream: streamV4(parts) })) }),
    failingOnce: (error: { statusCode: number }, result: Result) => {
      let calls = 0;
      return new MockLanguageModelV4({
        doGenerate: async () => {
          if (calls++ === 0)
            throw new APICallErrorV4({
              message: 'Failed',
              url: 'http://127.0.0.1/x',
              requestBodyValues: {},
              ...error,
            });
          return result;
        },
      });
    },
  },
];

describe.each(majors)('the model driver with an $name model', (major) => {
  it('runs a tool loop with doGenerate and sends the tool results back', async () => {
    const model = major.generating([toolCallResult('c1', 2, 3), textResult('5')]);
    const state = await createAgent({ model, tools: { add }, systemPrompt: 'You add.' }).execute(
      AgentState.empty().withUserMessage('2 + 3?'),
    );
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.finalResponse()).toBe('5');
    expect(state.usage()).toMatchObject({ inputTokens: 30, outputTokens: 7 });
    const second = model.doGenerateCalls[1];
    expect(second?.toolChoice).toEqual({ type: 'auto' });
    expect(second?.prompt.slice(1)).toEqual([
      { role: 'user', content: [{ type: 'text', text: '2 + 3?' }] },
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
  });

  it('runs a tool loop with doStream, reporting each text delta', async () => {
    const model = major.streaming([toolCallStream('c1', 2, 3), textStream('The answer ', 'is 5')]);
    const deltas: string[] = [];
    const agent = createAgent({ model, tools: { add }, modelOptions: { stream: true } });
    const state = await agent.execute(AgentState.empty().withUserMessage('2 + 3?'), {
      onEvent: (event) => {
        if (event.type === 'text.delta') deltas.push(event.delta);
      },
    });
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.finalResponse()).toBe('The answer is 5');
    expect(state.stepCount()).toBe(2);
    expect(deltas).toEqual(['The answer ', 'is 5']);
    expect(model.doStreamCalls).toHaveLength(2);
  });

  it('sends the toolChoice of the call options instead of auto', async () => {
    const model = major.generating([textResult('no tools')]);
    const agent = createAgent({
      model,
      tools: { add },
      modelOptions: { callOptions: { toolChoice: { type: 'none' } } },
    });
    await agent.execute(AgentState.empty().withUserMessage('hi'));
    expect(model.doGenerateCalls[0]?.toolChoice).toEqual({ type: 'none' });
  });

  it("merges the call settings, the state's llmConfig over them, the prompt and the signal", async () => {
    const model = major.generating([textResult('ok')]);
    const agent = createAgent({
      model,
      modelOptions: { callOptions: { temperature: 0.1, maxOutputTokens: 50 } },
    });
    await agent.execute(
      AgentState.empty().withUserMessage('hi').withLlmConfig({ temperature: 0.7, topP: 0.9 }),
    );
    const call = model.doGenerateCalls[0];
    expect(call?.temperature).toBe(0.7);
    expect(call?.maxOutputTokens).toBe(50);
    expect(call?.topP).toBe(0.9);
    expect(call?.prompt.at(-1)).toMatchObject({ role: 'user' });
    expect(call?.abortSignal).toBeInstanceOf(AbortSignal);
    expect(call).not.toHaveProperty('toolChoice');
  });

  it("retries the provider's retryable APICallError (429)", async () => {
    const model = major.failingOnce({ statusCode: 429 }, textResult('ok'));
    const state = await createAgent({ model, modelOptions: { retryDelayMs: 1 } }).execute(
      AgentState.empty().withUserMessage('hi'),
    );
    expect(state.finalResponse()).toBe('ok');
  });

  it("does not retry the provider's non-retryable APICallError (400), and records it", async () => {
    const model = major.failingOnce({ statusCode: 400 }, textResult('ok'));
    const state = await createAgent({ model, modelOptions: { retryDelayMs: 1 } }).execute(
      AgentState.empty().withUserMessage('hi'),
    );
    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.lastStep()?.errors()[0]).toMatchObject({
      name: 'AI_APICallError',
      details: { statusCode: 400 },
    });
  });
});

describe('a model of another specification', () => {
  const v2 = { specificationVersion: 'v2', provider: 'p', modelId: 'old', doGenerate: async () => ({}) };

  it('is refused by createAgent, naming the models it takes', () => {
    expect(() => createAgent({ model: v2 as unknown as LanguageModel })).toThrow(InvalidDefinitionError);
    expect(() => createAgent({ model: v2 as unknown as LanguageModel })).toThrow(
      /AI SDK 6 \(LanguageModelV3\)/,
    );
  });

  it('is refused by modelDriver with UnsupportedModelError', () => {
    expect(() => modelDriver(v2 as unknown as LanguageModel)).toThrow(UnsupportedModelError);
  });
});
