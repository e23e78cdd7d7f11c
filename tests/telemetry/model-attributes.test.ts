import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, type LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { context } from '@opentelemetry/api';
import { MockLanguageModelV4 } from 'ai/test';
import { beforeEach, describe, expect, it } from 'vitest';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { startOpenAIServer, textReply } from '../support/openai-server';
import { memoryTracer } from '../support/otel';

const text = (value: string): LanguageModelV4GenerateResult => ({
  content: [{ type: 'text', text: value }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage: {
    inputTokens: { total: 20, noCache: 20, cacheRead: 0, cacheWrite: undefined },
    outputTokens: { total: 2, text: 2, reasoning: undefined },
  },
  warnings: [],
});
const ask = () => AgentState.empty().withUserMessage('Hello');

describe("chat spans name the model's provider and server", () => {
  const otel = memoryTracer();
  beforeEach(() => {
    otel.reset();
    context.disable();
  });

  it('records gen_ai.provider.name, server.address and server.port of an OpenAI-compatible model', async () => {
    const server = await startOpenAIServer([textReply('hi')]);
    const model = createOpenAICompatible({ name: 'local', baseURL: server.baseURL }).chatModel('m-1');
    await createAgent({ model, telemetry: { tracer: otel.tracer } }).execute(ask());
    const [chat] = otel.named('chat m-1');
    expect(chat?.attributes).toMatchObject({
      'gen_ai.provider.name': 'local',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(server.baseURL).port),
    });
  });

  it("uses the conventions' provider names, and records no server for a model without a base URL", async () => {
    const model = new MockLanguageModelV4({
      provider: 'openai.responses',
      modelId: 'gpt',
      doGenerate: [text('hi')],
    });
    await createAgent({ model, telemetry: { tracer: otel.tracer } }).execute(ask());
    const [chat] = otel.named('chat gpt');
    expect(chat?.attributes['gen_ai.provider.name']).toBe('openai');
    expect(chat?.attributes['server.address']).toBeUndefined();
    expect(chat?.attributes['server.port']).toBeUndefined();
  });

  it('names the provider and server of the fallback model that answered', async () => {
    const server = await startOpenAIServer([textReply('from backup')]);
    const primary = new MockLanguageModelV4({
      provider: 'anthropic.messages',
      modelId: 'claude',
      doGenerate: async () => {
        throw new APICallError({
          message: 'no',
          url: 'http://127.0.0.1/x',
          requestBodyValues: {},
          statusCode: 400,
        });
      },
    });
    const backup = createOpenAICompatible({ name: 'local', baseURL: server.baseURL }).chatModel('backup');
    await createAgent({
      model: primary,
      fallbackModels: [backup],
      telemetry: { tracer: otel.tracer },
    }).execute(ask());
    const [chat] = otel.named('chat claude');
    expect(chat?.attributes).toMatchObject({
      'gen_ai.request.model': 'claude',
      'gen_ai.response.model': 'backup',
      'gen_ai.provider.name': 'local',
      'server.address': '127.0.0.1',
    });
  });

  it('records the system prompt as gen_ai.system_instructions only with recordContent', async () => {
    const model = new MockLanguageModelV4({ modelId: 'm-1', doGenerate: [text('a'), text('b')] });
    const withContent = createAgent({
      model,
      systemPrompt: 'You add numbers.',
      telemetry: { tracer: otel.tracer, recordContent: true },
    });
    await withContent.execute(ask());
    const [recorded] = otel.named('chat m-1');
    expect(JSON.parse(String(recorded?.attributes['gen_ai.system_instructions']))).toEqual([
      { type: 'text', content: 'You add numbers.' },
    ]);

    otel.reset();
    const without = createAgent({
      model,
      systemPrompt: 'You add numbers.',
      telemetry: { tracer: otel.tracer },
    });
    await without.execute(ask());
    const [plain] = otel.named('chat m-1');
    expect(plain).toBeDefined();
    expect(plain?.attributes['gen_ai.system_instructions']).toBeUndefined();
  });
});
