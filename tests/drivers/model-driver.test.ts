import {
  APICallError,
  type LanguageModelV4GenerateResult,
  type LanguageModelV4StreamPart,
} from '@ai-sdk/provider';
import { convertArrayToReadableStream, MockLanguageModelV4, mockValues } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ModelRetriesExhaustedError, withRetries } from '../../src/drivers/model-retries';
import { collectStream, ModelStreamError } from '../../src/drivers/model-stream';
import type { Hook } from '../../src/hooks/hook';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import { Message } from '../../src/state/message';
import { StopReason } from '../../src/state/stop-reason';
import { defineTool } from '../../src/tools/define-tool';
import { add, waitForState } from '../support/agents';

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

const rateLimited = (message = 'Rate limited') =>
  new APICallError({ message, url: 'http://127.0.0.1/x', requestBodyValues: {}, statusCode: 429 });
const streamOf = (parts: LanguageModelV4StreamPart[]) => async () => ({
  stream: convertArrayToReadableStream(parts),
});
const finish = (unified: 'stop' | 'tool-calls', input = 20, output = 2): LanguageModelV4StreamPart => ({
  type: 'finish',
  finishReason: { unified, raw: unified === 'stop' ? 'stop' : 'tool_calls' },
  usage: usage(input, output),
});

describe('model driver retries', () => {
  it('gives up after maxRetries with the provider error, its message naming the attempts', async () => {
    const attempts: APICallError[] = [];
    const call = async () => {
      const error = rateLimited(`Rate limited #${attempts.length + 1}`);
      attempts.push(error);
      throw error;
    };
    const signal = new AbortController().signal;
    const thrown = await withRetries(call, signal, { maxRetries: 2, retryDelayMs: 1 }).catch(
      (e: unknown) => e,
    );

    expect(thrown).toBeInstanceOf(ModelRetriesExhaustedError);
    expect(APICallError.isInstance(thrown)).toBe(true);
    const error = thrown as ModelRetriesExhaustedError;
    expect(error.name).toBe('AI_APICallError');
    expect(error.message).toBe('Rate limited #3 (failed after 3 attempts)');
    expect(error.statusCode).toBe(429);
    expect(error.isRetryable).toBe(true);
    expect(error.attempts).toBe(3);
    expect(error.errors).toEqual(attempts);
    expect(error.cause).toBe(attempts[2]);
  });

  it('records the exhausted error on the step: Failed, ErrorForbade', async () => {
    let calls = 0;
    const model = new MockLanguageModelV4({
      doGenerate: async () => {
        calls++;
        throw rateLimited();
      },
    });
    const agent = createAgent({ model, modelOptions: { maxRetries: 1, retryDelayMs: 1 } });
    const state = await agent.execute(AgentState.empty().withUserMessage('hi'));
    expect(calls).toBe(2);
    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.stopReason()).toBe(StopReason.ErrorForbade);
    expect(state.lastStep()?.errors()).toHaveLength(1);
    expect(state.lastStep()?.errors()[0]).toMatchObject({
      name: 'AI_APICallError',
      message: 'Rate limited (failed after 2 attempts)',
      code: null,
      details: { statusCode: 429 },
    });
  });

  it('with maxRetries 0 throws the provider error itself, after one call', async () => {
    const error = rateLimited();
    let calls = 0;
    const thrown = await withRetries(
      async () => {
        calls++;
        throw error;
      },
      new AbortController().signal,
      { maxRetries: 0 },
    ).catch((e: unknown) => e);
    expect(thrown).toBe(error);
    expect(calls).toBe(1);
  });

  it('stops retrying at a non-retryable error and throws it unchanged', async () => {
    const badRequest = new APICallError({
      message: 'Bad request',
      url: 'http://127.0.0.1/x',
      requestBodyValues: {},
      statusCode: 400,
    });
    const errors = [rateLimited(), badRequest];
    let calls = 0;
    const thrown = await withRetries(
      async () => {
        throw errors[calls++];
      },
      new AbortController().signal,
      { maxRetries: 5, retryDelayMs: 1 },
    ).catch((e: unknown) => e);
    expect(thrown).toBe(badRequest);
    expect(calls).toBe(2);
  });

  it('does not retry errors that are not API call errors', async () => {
    let calls = 0;
    const thrown = await withRetries(
      async () => {
        calls++;
        throw new TypeError('bug');
      },
      new AbortController().signal,
      { maxRetries: 3, retryDelayMs: 1 },
    ).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(TypeError);
    expect(calls).toBe(1);
  });

  it('an abort during the backoff ends the wait with the abort reason and no further call', async () => {
    const controller = new AbortController();
    let calls = 0;
    const run = withRetries(
      async () => {
        calls++;
        // Abort after the failure is handled, while the driver waits a minute to retry.
        setImmediate(() => controller.abort(new Error('user stop')));
        throw rateLimited();
      },
      controller.signal,
      { maxRetries: 2, retryDelayMs: 60_000 },
    );
    await expect(run).rejects.toThrow('user stop');
    expect(calls).toBe(1);
  });
});

describe('model driver streaming', () => {
  it('reports text deltas and records the same step a doGenerate call would', async () => {
    const next = mockValues(
      {
        stream: convertArrayToReadableStream<LanguageModelV4StreamPart>([
          { type: 'stream-start', warnings: [] },
          { type: 'response-metadata', id: 'r1', modelId: 'm' },
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'Let me ' },
          { type: 'text-delta', id: 't', delta: 'add.' },
          { type: 'text-end', id: 't' },
          { type: 'tool-input-start', id: 'c1', toolName: 'add' },
          { type: 'tool-input-delta', id: 'c1', delta: '{"a":2,' },
          { type: 'tool-input-delta', id: 'c1', delta: '"b":3}' },
          { type: 'tool-input-end', id: 'c1' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: '{"a":2,"b":3}' },
          finish('tool-calls', 10, 5),
        ]),
      },
      {
        stream: convertArrayToReadableStream<LanguageModelV4StreamPart>([
          { type: 'text-start', id: 't' },
          { type: 'reasoning-start', id: 'r' },
          { type: 'reasoning-delta', id: 'r', delta: 'hmm' },
          { type: 'reasoning-end', id: 'r' },
          { type: 'text-delta', id: 't', delta: '5' },
          { type: 'text-end', id: 't' },
          finish('stop'),
        ]),
      },
    );
    const streamed = new MockLanguageModelV4({ doStream: async () => next() });
    const generated = new MockLanguageModelV4({
      doGenerate: [
        {
          ...toolCall('c1', 2, 3),
          content: [{ type: 'text', text: 'Let me add.' }, ...toolCall('c1', 2, 3).content],
        },
        text('5'),
      ],
    });
    const actor = createAgent({
      model: streamed,
      tools: { add },
      modelOptions: { stream: true },
    }).createActor(AgentState.empty().withUserMessage('What is 2 + 3?'));
    const deltas: Array<{ delta: string; stepNumber: number }> = [];
    actor.on('text.delta', (event) => deltas.push(event));
    actor.start();
    actor.send({ type: 'execute' });
    await waitForState(actor, (s) => s.value === 'completed');
    const state = actor.getSnapshot().context.state;
    actor.stop();
    const plain = await createAgent({ model: generated, tools: { add } }).execute(
      AgentState.empty().withUserMessage('What is 2 + 3?'),
    );

    expect(streamed.doStreamCalls).toHaveLength(2);
    expect(streamed.doStreamCalls[0]?.abortSignal).toBeInstanceOf(AbortSignal);
    expect(deltas.map((d) => [d.stepNumber, d.delta])).toEqual([
      [1, 'Let me '],
      [1, 'add.'],
      [2, '5'],
    ]);
    const summary = (s: AgentState) =>
      s.steps().map((step) => ({
        text: step.outputText(),
        toolCalls: step.requestedToolCalls(),
        finishReason: step.finishReason(),
        usage: step.usage(),
        output: step.outputMessages().map((m) => [m.role, m.content, m.toolCalls ?? []]),
      }));
    expect(summary(state)).toEqual(summary(plain));
    expect(state.finalResponse()).toBe('5');
  });

  it('fails the step on an error part carrying an Error, keeping its class name', async () => {
    const model = new MockLanguageModelV4({
      doStream: streamOf([
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Hel' },
        {
          type: 'error',
          error: new APICallError({
            message: 'Overloaded',
            url: 'u',
            requestBodyValues: {},
            statusCode: 529,
          }),
        },
        finish('stop'),
      ]),
    });
    const state = await createAgent({ model, modelOptions: { stream: true } }).execute(
      AgentState.empty().withUserMessage('hi'),
    );
    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.stopReason()).toBe(StopReason.ErrorForbade);
    expect(model.doStreamCalls).toHaveLength(1);
    expect(state.lastStep()?.errors()[0]).toMatchObject({
      name: 'AI_APICallError',
      message: 'Overloaded',
      details: { statusCode: 529 },
    });
  });

  it('fails the step when the stream ends without a finish part', async () => {
    const model = new MockLanguageModelV4({
      doStream: streamOf([
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'cut o' },
      ]),
    });
    const state = await createAgent({ model, modelOptions: { stream: true } }).execute(
      AgentState.empty().withUserMessage('hi'),
    );
    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.lastStep()?.errors()).toEqual([
      {
        name: 'ModelStreamError',
        message: 'The model stream ended without a finish part',
        code: 'MODEL_STREAM_ERROR',
        details: null,
      },
    ]);
  });

  it('cancels the stream when it fails, releasing the connection', async () => {
    let cancelled: unknown = 'not cancelled';
    const stream = new ReadableStream<LanguageModelV4StreamPart>({
      start(controller) {
        controller.enqueue({
          type: 'error',
          error: { message: 'quota exceeded', type: 'insufficient_quota' },
        });
      },
      cancel(reason) {
        cancelled = reason;
      },
    });
    const thrown = await collectStream({ stream }, () => undefined).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(ModelStreamError);
    expect((thrown as ModelStreamError).message).toBe('quota exceeded');
    expect((thrown as ModelStreamError).cause).toEqual({
      message: 'quota exceeded',
      type: 'insufficient_quota',
    });
    expect(cancelled).toBe(thrown);
  });
});

describe('model driver tool arguments', () => {
  it('tells the model its tool arguments were not valid JSON; the tool does not run', async () => {
    let ran = 0;
    const counted = defineTool({
      description: 'Add two numbers',
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => {
        ran++;
        return a + b;
      },
    });
    const model = new MockLanguageModelV4({
      doGenerate: [
        {
          ...toolCall('c1', 0, 0),
          content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: '{"a": 1, b: 2}' }],
        },
        text('sorry'),
      ],
    });
    const state = await createAgent({ model, tools: { add: counted } }).execute(
      AgentState.empty().withUserMessage('1 + 2?'),
    );
    expect(ran).toBe(0);
    const execution = state.steps()[0]?.toolExecutions()[0];
    expect(execution?.args()).toBe('{"a": 1, b: 2}');
    expect(execution?.error()).toMatchObject({
      name: 'ToolArgumentsInvalid',
      code: 'INVALID_TOOL_ARGUMENTS',
      details: { invalidJson: true, rawArguments: '{"a": 1, b: 2}' },
    });
    expect(execution?.error()?.message).toMatch(
      /^Invalid arguments for tool 'add': the arguments are not valid JSON \(.+\)\. Send them as one JSON object/,
    );
    const toolResult = model.doGenerateCalls[1]?.prompt.at(-1);
    expect(toolResult).toMatchObject({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'c1', output: { type: 'error-text' } }],
    });
  });
});

describe('model driver conversation', () => {
  it("sends earlier executions' questions and answers but not their tool traces, step after step", async () => {
    const model = new MockLanguageModelV4({
      doGenerate: [toolCall('c1', 2, 3), text('5'), toolCall('c2', 5, 1), toolCall('c3', 6, 1), text('7')],
    });
    const agent = createAgent({ model, tools: { add } });
    const first = await agent.execute(AgentState.empty().withUserMessage('2 + 3?'));
    const second = await agent.execute(first.forNextExecution().withUserMessage('then + 1 + 1?'));
    expect(second.finalResponse()).toBe('7');

    const prompts = model.doGenerateCalls.map((call) => call.prompt);
    const roles = (i: number) => prompts[i]?.map((m) => m.role);
    expect(roles(0)).toEqual(['user']);
    expect(roles(1)).toEqual(['user', 'assistant', 'tool']);
    // execution 2: its first call sees question and answer of execution 1, not the c1 trace
    expect(roles(2)).toEqual(['user', 'assistant', 'user']);
    expect(roles(3)).toEqual(['user', 'assistant', 'user', 'assistant', 'tool']);
    expect(roles(4)).toEqual(['user', 'assistant', 'user', 'assistant', 'tool', 'assistant', 'tool']);
    expect(JSON.stringify(prompts[4])).not.toContain('"c1"');
    // each step records as its input what its call was sent
    const inputs = second.steps().map((step) => step.inputMessages().map((m) => m.role));
    expect(inputs).toEqual([roles(2), roles(3), roles(4)]);
    // and the state's JSON keeps them through a round trip
    const restored = AgentState.fromJSON(JSON.parse(JSON.stringify(second)));
    expect(restored.steps().map((step) => step.inputMessages())).toEqual(
      second.steps().map((step) => step.inputMessages()),
    );
  });

  it("records a first execution's step inputs as prefixes of the conversation itself, not copies", async () => {
    const model = new MockLanguageModelV4({
      doGenerate: [toolCall('c1', 2, 3), toolCall('c2', 5, 1), text('6')],
    });
    const state = await createAgent({ model, tools: { add } }).execute(
      AgentState.empty().withUserMessage('?'),
    );
    const conversation = state.messageList();
    expect(state.steps().map((s) => s.inputMessageList().isPrefixOf(conversation))).toEqual([
      true,
      true,
      true,
    ]);
    expect(state.steps().map((s) => s.inputMessageList().size)).toEqual([1, 3, 5]);
  });
});

describe('model driver prompt', () => {
  it('sends the conversation a hook rewrote, not the one the previous call saw', async () => {
    const model = new MockLanguageModelV4({ doGenerate: [toolCall('c1', 2, 3), text('5')] });
    // before step 2, a hook replaces the conversation with a summary (a list that does not extend the last)
    const summarize: Hook = {
      beforeStep: (state) =>
        state.stepCount() === 1
          ? state.withContext(
              state
                .context()
                .withStore(state.store().withSectionReplaced([Message.user('summary: 2 + 3 was asked')])),
            )
          : undefined,
    };
    await createAgent({ model, tools: { add }, hooks: [summarize] }).execute(
      AgentState.empty().withUserMessage('2 + 3?'),
    );
    expect(model.doGenerateCalls[1]?.prompt).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'summary: 2 + 3 was asked' }] },
    ]);
  });
});
