import { MockLanguageModelV4, convertArrayToReadableStream as streamV4 } from 'ai/test';
import { MockLanguageModelV3, convertArrayToReadableStream as streamV3 } from 'ai6/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { reactDriver } from '../../src/drivers/react-driver';
import type { Hook } from '../../src/hooks/hook';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import { defineTool } from '../../src/tools/define-tool';
import { add } from '../support/agents';

const usage = {
  inputTokens: { total: 4, noCache: 4, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: 2, text: 2, reasoning: undefined },
};
const stop = { unified: 'stop' as const, raw: 'stop' };
const toolCalls = { unified: 'tool-calls' as const, raw: 'tool_calls' };
// biome-ignore lint/suspicious/noExplicitAny: content parts of both specifications, checked by the mocks themselves
type Content = any[];
const answer = (content: Content, finishReason: typeof stop | typeof toolCalls = stop) => ({
  content,
  finishReason,
  usage,
  warnings: [],
});
const signature = { anthropic: { signature: 'sig-1' } };
const reasoningThenCall: Content = [
  { type: 'reasoning', text: 'I should add.', providerMetadata: signature },
  {
    type: 'tool-call',
    toolCallId: 'c1',
    toolName: 'add',
    input: '{"a":2,"b":3}',
    providerMetadata: { google: { thoughtSignature: 't1' } },
  },
];

const majors = [
  {
    name: 'AI SDK 6 (v3)',
    spec: 'v3',
    generating: (results: ReturnType<typeof answer>[]) => new MockLanguageModelV3({ doGenerate: results }),
    streaming: (streams: Content[]) =>
      new MockLanguageModelV3({ doStream: streams.map((parts) => ({ stream: streamV3(parts) })) }),
    // v3 writes file data as the bytes, base64 text or URL itself
    fileData: (data: string | URL) => data,
  },
  {
    name: 'AI SDK 7 (v4)',
    spec: 'v4',
    generating: (results: ReturnType<typeof answer>[]) => new MockLanguageModelV4({ doGenerate: results }),
    streaming: (streams: Content[]) =>
      new MockLanguageModelV4({ doStream: streams.map((parts) => ({ stream: streamV4(parts) })) }),
    fileData: (data: string | URL) =>
      data instanceof URL ? { type: 'url', url: data } : { type: 'data', data },
  },
] as const;

describe.each(majors)('messages as rich as the model: $name', (major) => {
  it('sends images and files of a user message as file parts', async () => {
    const model = major.generating([answer([{ type: 'text', text: 'a cat' }])]);
    const state = AgentState.empty().withUserMessage([
      { type: 'text', text: 'What is in these?' },
      { type: 'file', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
      { type: 'file', mediaType: 'application/pdf', data: 'https://example.com/a.pdf', filename: 'a.pdf' },
    ]);
    expect(state.messages()[0]?.content).toBe('What is in these?');
    await createAgent({ model }).execute(state);
    expect(model.doGenerateCalls[0]?.prompt).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is in these?' },
          { type: 'file', mediaType: 'image/png', data: major.fileData('iVBORw0KGgo=') },
          {
            type: 'file',
            mediaType: 'application/pdf',
            data: major.fileData(new URL('https://example.com/a.pdf')),
            filename: 'a.pdf',
          },
        ],
      },
    ]);
  });

  it("sends a user message's image to a ReAct model too", async () => {
    const model = major.generating([answer([{ type: 'text', text: 'Final Answer: a cat' }])]);
    const state = AgentState.empty().withUserMessage([
      { type: 'text', text: 'What is this?' },
      { type: 'file', mediaType: 'image/png', data: 'iVBORw0KGgo=' },
    ]);
    const done = await createAgent({ driver: reactDriver(model) }).execute(state);
    expect(done.finalResponse()).toBe('a cat');
    expect(model.doGenerateCalls[0]?.prompt.at(-1)).toEqual({
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'file', mediaType: 'image/png', data: major.fileData('iVBORw0KGgo=') },
      ],
    });
  });

  it('keeps reasoning with its signature and tool-call metadata, and sends them back on the next call', async () => {
    const model = major.generating([
      answer(reasoningThenCall, toolCalls),
      answer([{ type: 'text', text: '5' }]),
    ]);
    const state = await createAgent({ model, tools: { add } }).execute(
      AgentState.empty().withUserMessage('2 + 3?'),
    );
    expect(state.finalResponse()).toBe('5');
    expect(model.doGenerateCalls[1]?.prompt[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'I should add.', providerOptions: signature },
        {
          type: 'tool-call',
          toolCallId: 'c1',
          toolName: 'add',
          input: { a: 2, b: 3 },
          providerOptions: { google: { thoughtSignature: 't1' } },
        },
      ],
    });
    // ... and the state keeps them through JSON
    const restored = AgentState.fromJSON(JSON.parse(JSON.stringify(state.toJSON())));
    expect(restored.messages()[1]?.parts).toEqual([
      { type: 'reasoning', text: 'I should add.', providerMetadata: signature },
    ]);
    expect(restored.messages()[1]?.toolCalls?.[0]?.providerMetadata).toEqual({
      google: { thoughtSignature: 't1' },
    });
  });

  it('collects streamed reasoning with a signature that arrives on its own delta', async () => {
    const model = major.streaming([
      [
        { type: 'reasoning-start', id: 'r' },
        { type: 'reasoning-delta', id: 'r', delta: 'Think' },
        { type: 'reasoning-delta', id: 'r', delta: 'ing.' },
        { type: 'reasoning-delta', id: 'r', delta: '', providerMetadata: signature },
        { type: 'reasoning-end', id: 'r' },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Hello' },
        { type: 'text-end', id: 't' },
        { type: 'finish', finishReason: stop, usage },
      ],
    ]);
    const state = await createAgent({ model, modelOptions: { stream: true } }).execute(
      AgentState.empty().withUserMessage('hi'),
    );
    expect(state.finalResponse()).toBe('Hello');
    expect(state.messages()[1]?.parts).toEqual([
      { type: 'reasoning', text: 'Thinking.', providerMetadata: signature },
      { type: 'text', text: 'Hello' },
    ]);
  });

  it('passes provider tools as such and records provider-executed calls and results without running them', async () => {
    let ran = 0;
    const webSearch = {
      type: 'provider' as const,
      id: 'openai.web_search' as const,
      args: { searchContextSize: 'low' },
      inputSchema: z.object({}),
      execute: async () => {
        ran++;
        return 'local';
      },
    };
    const model = major.generating([
      answer([
        {
          type: 'tool-call',
          toolCallId: 'ws1',
          toolName: 'web_search',
          input: '{"query":"weather"}',
          providerExecuted: true,
        },
        { type: 'tool-result', toolCallId: 'ws1', toolName: 'web_search', result: { results: ['sunny'] } },
        { type: 'text', text: 'It is sunny.' },
      ]),
      answer([{ type: 'text', text: 'Yes.' }]),
    ]);
    const agent = createAgent({ model, tools: { web_search: webSearch } });
    const first = await agent.execute(AgentState.empty().withUserMessage('Weather?'));
    expect(first.status()).toBe(ExecutionStatus.Completed);
    expect(first.finalResponse()).toBe('It is sunny.');
    expect(ran).toBe(0);
    expect(model.doGenerateCalls[0]?.tools).toEqual([
      { type: 'provider', id: 'openai.web_search', name: 'web_search', args: { searchContextSize: 'low' } },
    ]);

    await agent.execute(first.withUserMessage('Sure?'));
    expect(model.doGenerateCalls[1]?.prompt[1]).toEqual({
      role: 'assistant',
      content: [
        {
          type: 'tool-call',
          toolCallId: 'ws1',
          toolName: 'web_search',
          input: { query: 'weather' },
          providerExecuted: true,
        },
        {
          type: 'tool-result',
          toolCallId: 'ws1',
          toolName: 'web_search',
          output: { type: 'json', value: { results: ['sunny'] } },
        },
        { type: 'text', text: 'It is sunny.' },
      ],
    });
  });

  it('records streamed provider-executed calls, their results and files without running anything', async () => {
    const model = major.streaming([
      [
        {
          type: 'tool-call',
          toolCallId: 'ex1',
          toolName: 'code_execution',
          input: '{"code":"1+1"}',
          providerExecuted: true,
        },
        { type: 'tool-result', toolCallId: 'ex1', toolName: 'code_execution', result: { stdout: '2' } },
        {
          type: 'file',
          mediaType: 'image/png',
          data: major.spec === 'v3' ? 'iVBORw==' : { type: 'data', data: 'iVBORw==' },
        },
        { type: 'text-start', id: 't' },
        { type: 'text-delta', id: 't', delta: 'Two.' },
        { type: 'text-end', id: 't' },
        { type: 'finish', finishReason: stop, usage },
      ],
    ]);
    const state = await createAgent({ model, modelOptions: { stream: true } }).execute(
      AgentState.empty().withUserMessage('1 + 1?'),
    );
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.messages()[1]?.toolCalls).toBeUndefined();
    expect(state.messages()[1]?.parts).toEqual([
      {
        type: 'tool-call',
        toolCallId: 'ex1',
        toolName: 'code_execution',
        input: { code: '1+1' },
        providerExecuted: true,
      },
      { type: 'tool-result', toolCallId: 'ex1', toolName: 'code_execution', output: { stdout: '2' } },
      { type: 'file', mediaType: 'image/png', data: 'iVBORw==' },
      { type: 'text', text: 'Two.' },
    ]);
  });
});

describe('per-step settings', () => {
  const text = (value: string) => answer([{ type: 'text', text: value }]);

  it('prepareStep chooses the model, tool choice and tools of each step, of either specification', async () => {
    const first = new MockLanguageModelV4({
      modelId: 'fast',
      doGenerate: [answer(reasoningThenCall, toolCalls)],
    });
    const second = new MockLanguageModelV3({ modelId: 'strong', doGenerate: [text('5')] });
    const multiply = defineTool({ inputSchema: z.object({ a: z.number() }), execute: ({ a }) => a * 2 });
    const agent = createAgent({
      model: first,
      tools: { add, multiply },
      modelOptions: {
        prepareStep: (state) =>
          state.stepCount() === 0
            ? { toolChoice: { type: 'tool', toolName: 'add' }, activeTools: ['add'] }
            : { model: second },
      },
    });
    const state = await agent.execute(AgentState.empty().withUserMessage('2 + 3?'));
    expect(state.finalResponse()).toBe('5');
    expect(first.doGenerateCalls[0]?.toolChoice).toEqual({ type: 'tool', toolName: 'add' });
    expect(first.doGenerateCalls[0]?.tools?.map((t) => t.name)).toEqual(['add']);
    expect(second.doGenerateCalls[0]?.tools?.map((t) => t.name)).toEqual(['add', 'multiply']);
    expect(second.doGenerateCalls[0]?.prompt).toHaveLength(3);
  });

  it("a hook setting llmConfig.model switches to that one of the driver's models", async () => {
    const small = new MockLanguageModelV4({
      modelId: 'small',
      doGenerate: [answer(reasoningThenCall, toolCalls)],
    });
    const large = new MockLanguageModelV4({ modelId: 'large', doGenerate: [text('5')] });
    const escalate: Hook = {
      beforeStep: (state) => (state.stepCount() > 0 ? state.withLlmConfig({ model: 'large' }) : state),
    };
    const state = await createAgent({
      model: small,
      tools: { add },
      hooks: [escalate],
      modelOptions: { models: { large } },
    }).execute(AgentState.empty().withUserMessage('2 + 3?'));
    expect(state.finalResponse()).toBe('5');
    expect(small.doGenerateCalls).toHaveLength(1);
    expect(large.doGenerateCalls).toHaveLength(1);
  });
});
