import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, type LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { InvalidDefinitionError } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import { StopReason } from '../../src/state/stop-reason';
import { add } from '../support/agents';
import { serverPerTest, textReply, toolCallReply } from '../support/openai-server';

const usage = (input: number, output: number): LanguageModelV4GenerateResult['usage'] => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});
const text = (value: string): LanguageModelV4GenerateResult => ({
  content: [{ type: 'text', text: value }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage: usage(100, 10),
  warnings: [],
});
const apiError = (statusCode: number, message: string) =>
  new APICallError({ message, url: 'http://127.0.0.1/x', requestBodyValues: {}, statusCode });

/** A mock model that fails every call with `error`, counting its calls. */
function failing(modelId: string, error: () => Error) {
  return new MockLanguageModelV4({
    modelId,
    doGenerate: async () => {
      throw error();
    },
  });
}

describe('model fallback (fallbackModels)', () => {
  it('hands a step the model fails with a non-retryable error to the next model, which answers it', async () => {
    const primary = failing('primary', () => apiError(400, 'Bad request: unknown model'));
    const backup = new MockLanguageModelV4({ modelId: 'backup', doGenerate: [text('hello')] });
    const agent = createAgent({ model: primary, fallbackModels: [backup] });
    const state = await agent.execute(AgentState.empty().withUserMessage('hi'));

    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.finalResponse()).toBe('hello');
    expect(state.stepCount()).toBe(1);
    expect(state.lastStep()?.model()).toBe('backup');
    expect(primary.doGenerateCalls).toHaveLength(1);
    // the same call went to the backup: same prompt
    expect(backup.doGenerateCalls[0]?.prompt).toEqual(primary.doGenerateCalls[0]?.prompt);
  });

  it('moves on only when the retries of a retryable error run out', async () => {
    const primary = failing('primary', () => apiError(503, 'Service unavailable'));
    const backup = new MockLanguageModelV4({ modelId: 'backup', doGenerate: [text('ok')] });
    const agent = createAgent({
      model: primary,
      fallbackModels: [backup],
      modelOptions: { maxRetries: 2, retryDelayMs: 1 },
    });
    const state = await agent.execute(AgentState.empty().withUserMessage('hi'));
    expect(primary.doGenerateCalls).toHaveLength(3);
    expect(backup.doGenerateCalls).toHaveLength(1);
    expect(state.lastStep()?.model()).toBe('backup');
  });

  it('walks the chain in order and prices each step with the model that answered it', async () => {
    const first = failing('first', () => apiError(400, 'refused'));
    const second = failing('second', () => apiError(401, 'bad key'));
    const third = new MockLanguageModelV4({ modelId: 'third', doGenerate: [text('third speaks')] });
    const agent = createAgent({
      model: first,
      fallbackModels: [second, third],
      modelOptions: {
        pricing: {
          first: { inputPerMillion: 1_000_000, outputPerMillion: 1_000_000 },
          third: { inputPerMillion: 1_000, outputPerMillion: 2_000 },
        },
      },
    });
    const state = await agent.execute(AgentState.empty().withUserMessage('hi'));
    expect(state.lastStep()?.model()).toBe('third');
    expect(first.doGenerateCalls).toHaveLength(1);
    expect(second.doGenerateCalls).toHaveLength(1);
    // (100 * 1000 + 10 * 2000) / 1e6
    expect(state.usage().cost).toBeCloseTo(0.12);
  });

  it('starts every step with the first model again', async () => {
    let calls = 0;
    const primary = new MockLanguageModelV4({
      modelId: 'primary',
      doGenerate: async () => {
        calls++;
        if (calls === 1) throw apiError(400, 'flaky');
        return text('primary again');
      },
    });
    const backup = new MockLanguageModelV4({
      modelId: 'backup',
      doGenerate: [
        {
          content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: '{"a":1,"b":2}' }],
          finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
          usage: usage(10, 5),
          warnings: [],
        },
      ],
    });
    const agent = createAgent({ model: primary, fallbackModels: [backup], tools: { add } });
    const state = await agent.execute(AgentState.empty().withUserMessage('1 + 2?'));
    expect(state.steps().map((step) => step.model())).toEqual(['backup', 'primary']);
    expect(state.finalResponse()).toBe('primary again');
  });

  it('fails the run with AllModelsFailedError naming every model when the whole chain fails', async () => {
    const primary = failing('primary', () => apiError(400, 'refused'));
    const backup = failing('backup', () => apiError(403, 'forbidden'));
    const state = await createAgent({ model: primary, fallbackModels: [backup] }).execute(
      AgentState.empty().withUserMessage('hi'),
    );
    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.stopReason()).toBe(StopReason.ErrorForbade);
    const error = state.lastStep()?.errors()[0];
    expect(error?.code).toBe('ALL_MODELS_FAILED');
    expect(error?.message).toContain('mock-provider/primary: refused');
    expect(error?.message).toContain('mock-provider/backup: forbidden');
  });

  it('does not hand a stopped step to the next model', async () => {
    const controller = new AbortController();
    const primary = new MockLanguageModelV4({
      modelId: 'primary',
      doGenerate: async ({ abortSignal }) =>
        new Promise((_, reject) => {
          abortSignal?.addEventListener('abort', () => reject(abortSignal.reason), { once: true });
          controller.abort();
        }),
    });
    const backup = new MockLanguageModelV4({ modelId: 'backup', doGenerate: [text('too late')] });
    const state = await createAgent({ model: primary, fallbackModels: [backup] }).execute(
      AgentState.empty().withUserMessage('hi'),
      { signal: controller.signal },
    );
    expect(state.status()).toBe(ExecutionStatus.Stopped);
    expect(backup.doGenerateCalls).toHaveLength(0);
  });

  it('hands on a stream that fails to open, but not one that failed after its text went out', async () => {
    const deltas: string[] = [];
    const cut = new MockLanguageModelV4({
      modelId: 'cut',
      doStream: async () => ({
        stream: convertArrayToReadableStream([
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'Hal' },
          { type: 'error', error: apiError(529, 'Overloaded') },
        ]),
      }),
    });
    const refused = failing('refused', () => apiError(400, 'refused'));
    refused.doStream = async () => {
      throw apiError(400, 'refused');
    };
    const backup = new MockLanguageModelV4({
      modelId: 'backup',
      doStream: async () => ({
        stream: convertArrayToReadableStream([
          { type: 'text-start', id: 't' },
          { type: 'text-delta', id: 't', delta: 'ok' },
          { type: 'text-end', id: 't' },
          { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(1, 1) },
        ]),
      }),
    });
    const onEvent = (event: { type: string; delta?: string }) => {
      if (event.type === 'text.delta') deltas.push(event.delta ?? '');
    };
    const options = { modelOptions: { stream: true, maxRetries: 0 }, fallbackModels: [backup] };
    const opened = await createAgent({ model: refused, ...options }).execute(
      AgentState.empty().withUserMessage('hi'),
      {
        onEvent,
      },
    );
    expect(opened.finalResponse()).toBe('ok');
    expect(opened.lastStep()?.model()).toBe('backup');

    deltas.length = 0;
    const broken = await createAgent({ model: cut, ...options }).execute(
      AgentState.empty().withUserMessage('hi'),
      {
        onEvent,
      },
    );
    expect(broken.status()).toBe(ExecutionStatus.Failed);
    expect(broken.lastStep()?.errors()[0]?.message).toBe('Overloaded');
    expect(deltas).toEqual(['Hal']);
    expect(backup.doStreamCalls).toHaveLength(1);
  });

  it('keeps the answering model through serialization', async () => {
    const primary = failing('primary', () => apiError(400, 'refused'));
    const backup = new MockLanguageModelV4({ modelId: 'backup', doGenerate: [text('ok')] });
    const state = await createAgent({ model: primary, fallbackModels: [backup] }).execute(
      AgentState.empty().withUserMessage('hi'),
    );
    const again = AgentState.fromJSON(JSON.parse(JSON.stringify(state)));
    expect(again.lastStep()?.model()).toBe('backup');
  });

  it('refuses fallbackModels that are not models, or without a model', () => {
    const model = new MockLanguageModelV4({ doGenerate: [text('x')] });
    expect(() => createAgent({ model, fallbackModels: [{} as never] })).toThrow(
      /fallbackModels\[0\] is not an AI SDK LanguageModel/,
    );
    expect(() =>
      createAgent({ driver: { name: 'd', infer: (s) => s }, fallbackModels: [model] }),
    ).toThrowError(InvalidDefinitionError);
  });
});

describe('model fallback over HTTP (loopback OpenAI-compatible server)', () => {
  const start = serverPerTest();

  it('falls back from a provider answering 500 to another model on the same server', async () => {
    const server = await start((request) =>
      request.body.model === 'primary'
        ? { type: 'error', status: 500, message: 'upstream is down' }
        : request.body.messages.some((m: { role: string }) => m.role === 'tool')
          ? textReply('3')
          : toolCallReply([{ id: 'c1', name: 'add', arguments: { a: 1, b: 2 } }]),
    );
    const provider = createOpenAICompatible({ name: 'local', baseURL: server.baseURL });
    const agent = createAgent({
      model: provider.chatModel('primary'),
      fallbackModels: [provider.chatModel('backup')],
      tools: { add },
      modelOptions: { maxRetries: 1, retryDelayMs: 1 },
    });
    const state = await agent.execute(AgentState.empty().withUserMessage('1 + 2?'));

    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.finalResponse()).toBe('3');
    expect(state.steps().map((step) => step.model())).toEqual(['backup', 'backup']);
    // per step: the primary twice (one retry), then the backup
    expect(server.requests.map((r) => r.body.model)).toEqual([
      'primary',
      'primary',
      'backup',
      'primary',
      'primary',
      'backup',
    ]);
  });
});
