import { convertToModelMessages, generateText, type ModelMessage, validateUIMessages } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { generateText as generateText6, type ModelMessage as ModelMessage6 } from 'ai6';
import { MockLanguageModelV3 } from 'ai6/test';
import { describe, expect, it } from 'vitest';
import { modelDriver } from '../../src/drivers/model-driver';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { fromModelMessages, toModelMessages } from '../../src/messages/model-messages';
import { toUIMessages } from '../../src/messages/ui-messages';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { InvalidArgumentError } from '../../src/state/errors';
import { Message } from '../../src/state/message';
import { add } from '../support/agents';

const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const done = (text: string) => ({
  content: [{ type: 'text' as const, text }],
  finishReason: { unified: 'stop' as const, raw: 'stop' },
  usage,
  warnings: [],
});

const signature = { anthropic: { signature: 'sig' } };
/** A conversation as an AI SDK 7 app holds it: an image, reasoning with a signature, a tool round. */
const conversation: ModelMessage[] = [
  { role: 'system', content: 'You add numbers.' },
  {
    role: 'user',
    content: [
      { type: 'text', text: 'Add the numbers in this picture.' },
      { type: 'image', image: new Uint8Array([137, 80, 78, 71]), mediaType: 'image/png' },
    ],
  },
  {
    role: 'assistant',
    content: [
      { type: 'reasoning', text: 'I see 2 and 3.', providerOptions: signature },
      { type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: { a: 2, b: 3 } },
    ],
  },
  {
    role: 'tool',
    content: [{ type: 'tool-result', toolCallId: 'c1', toolName: 'add', output: { type: 'json', value: 5 } }],
  },
  { role: 'assistant', content: 'It is 5.' },
];

describe('AgentState from and to the AI SDK messages', () => {
  it('builds a state from ModelMessage[] that an agent continues, the model seeing everything', async () => {
    const state = fromModelMessages(conversation).withUserMessage('And doubled?');
    expect(state.systemPrompt()).toBe('You add numbers.');
    expect(state.messages().map((m) => [m.role, m.content])).toEqual([
      ['user', 'Add the numbers in this picture.'],
      ['assistant', ''],
      ['tool', '5'],
      ['assistant', 'It is 5.'],
      ['user', 'And doubled?'],
    ]);
    const model = new MockLanguageModelV4({ doGenerate: [done('10')] });
    const finished = await createAgent({ model, tools: { add } }).execute(state);
    expect(finished.finalResponse()).toBe('10');
    expect(model.doGenerateCalls[0]?.prompt.slice(0, 4)).toEqual([
      { role: 'system', content: 'You add numbers.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Add the numbers in this picture.' },
          { type: 'file', mediaType: 'image/png', data: { type: 'data', data: 'iVBORw==' } },
        ],
      },
      {
        role: 'assistant',
        content: [
          { type: 'reasoning', text: 'I see 2 and 3.', providerOptions: signature },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: { a: 2, b: 3 } },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'add', output: { type: 'text', value: '5' } },
        ],
      },
    ]);
  });

  it('turns a state back into ModelMessage[] that generateText of AI SDK 7 and 6 accepts', async () => {
    const state = fromModelMessages(conversation);
    const messages = toModelMessages(state);
    expect(messages[0]?.role).toBe('user');
    expect(messages[1]).toEqual(conversation[2]);

    const model7 = new MockLanguageModelV4({ doGenerate: [done('ok')] });
    const typed7: ModelMessage[] = messages;
    await generateText({ model: model7, instructions: state.systemPrompt(), messages: typed7 });
    const model6 = new MockLanguageModelV3({ doGenerate: [done('ok')] });
    const typed6: ModelMessage6[] = messages;
    await generateText6({ model: model6, system: state.systemPrompt(), messages: typed6 });
    for (const call of [model7.doGenerateCalls[0], model6.doGenerateCalls[0]]) {
      expect(call?.prompt.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'tool', 'assistant']);
      expect(call?.prompt[2]?.content).toContainEqual({
        type: 'reasoning',
        text: 'I see 2 and 3.',
        providerOptions: signature,
      });
    }
  });

  it('round-trips: fromModelMessages(toModelMessages(state)) holds the same conversation', () => {
    const state = fromModelMessages([
      ...conversation,
      {
        role: 'assistant',
        content: [
          {
            type: 'tool-call',
            toolCallId: 'w1',
            toolName: 'web_search',
            input: { q: 'x' },
            providerExecuted: true,
          },
          {
            type: 'tool-result',
            toolCallId: 'w1',
            toolName: 'web_search',
            output: { type: 'json', value: { hits: 1 } },
          },
          { type: 'text', text: 'Found it.', providerOptions: { openai: { itemId: 'i1' } } },
        ],
      },
    ]);
    expect(toModelMessages(state).at(-1)).toEqual({
      role: 'assistant',
      content: [
        {
          type: 'tool-call',
          toolCallId: 'w1',
          toolName: 'web_search',
          input: { q: 'x' },
          providerExecuted: true,
        },
        {
          type: 'tool-result',
          toolCallId: 'w1',
          toolName: 'web_search',
          output: { type: 'json', value: { hits: 1 } },
        },
        { type: 'text', text: 'Found it.', providerOptions: { openai: { itemId: 'i1' } } },
      ],
    });
    const again = fromModelMessages(toModelMessages(state)).withSystemPrompt(state.systemPrompt());
    expect(again.systemPrompt()).toBe(state.systemPrompt());
    expect(again.messages()).toEqual(state.messages());
  });

  it('turns a run into UI messages the AI SDK validates and converts back', async () => {
    const agent = createAgent({
      driver: scriptedDriver([
        { toolCalls: [{ id: 'c1', name: 'add', args: { a: 2, b: 3 } }] },
        { text: 'It is 5.' },
      ]),
      tools: { add },
    });
    const state = await agent.execute(
      AgentState.empty().withUserMessage([
        { type: 'text', text: 'Add these.' },
        { type: 'file', mediaType: 'image/png', data: 'iVBORw==' },
      ]),
    );
    const ui = toUIMessages(state);
    // the chat's grouping: one assistant message per execution, its id the execution's
    expect(ui).toEqual([
      {
        id: 'user-0',
        role: 'user',
        parts: [
          { type: 'text', text: 'Add these.', state: 'done' },
          { type: 'file', mediaType: 'image/png', url: 'data:image/png;base64,iVBORw==' },
        ],
      },
      {
        id: state.executionId(),
        role: 'assistant',
        parts: [
          { type: 'step-start' },
          {
            type: 'tool-add',
            toolCallId: 'c1',
            state: 'output-available',
            input: { a: 2, b: 3 },
            output: 5,
          },
          { type: 'step-start' },
          { type: 'text', text: 'It is 5.', state: 'done' },
        ],
      },
    ]);
    const validated = await validateUIMessages({ messages: ui });
    const back = await convertToModelMessages(validated);
    expect(back.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('shows a failed tool call as output-error', () => {
    const ui = toUIMessages([
      Message.user('go'),
      Message.assistant('', [{ id: 'c1', name: 'add', args: {} }]),
      Message.toolResult({ id: 'c1', name: 'add' }, 'a is required', true),
    ]);
    expect(ui[1]?.parts[1]).toMatchObject({
      type: 'tool-add',
      state: 'output-error',
      errorText: 'a is required',
    });
  });

  it('writes file data as a model takes it: a data: URL as its base64 text, an http(s) URL as a URL', async () => {
    const state = AgentState.empty().withUserMessage([
      { type: 'file', mediaType: 'image/png', data: 'data:image/png;base64,iVBORw==' },
      { type: 'file', mediaType: 'text/plain', data: 'data:text/plain,hi%21' },
      { type: 'file', mediaType: 'image/png', data: 'https://example.com/a.png' },
      { type: 'file', mediaType: 'image/png', data: 'https://exa mple.com/[' },
      { type: 'file', mediaType: 'image/png', data: 'iVBORw==' },
    ]);
    const [user] = toModelMessages(state);
    const data = ((user?.content ?? []) as Array<{ data: unknown }>).map((part) => part.data);
    expect(data).toEqual([
      'iVBORw==',
      Buffer.from('hi!').toString('base64'),
      new URL('https://example.com/a.png'),
      'https://exa mple.com/[',
      'iVBORw==',
    ]);
    // the model's prompt gets the same data (the model driver's rule is this one)
    const model = new MockLanguageModelV4({ doGenerate: async () => done('ok') });
    await createAgent({ driver: modelDriver(model) }).execute(state);
    const prompt = model.doGenerateCalls[0]?.prompt.find((m) => m.role === 'user');
    const sent = ((prompt?.content ?? []) as Array<{ data: unknown }>).map((part) => part.data);
    expect(sent).toEqual(
      data.map((d) => (d instanceof URL ? { type: 'url', url: d } : { type: 'data', data: d })),
    );
  });

  it('withMessages refuses ModelMessages, pointing to fromModelMessages', () => {
    const add = () => AgentState.empty().withMessages(conversation.slice(1) as unknown as Message[]);
    expect(add).toThrow(InvalidArgumentError);
    expect(add).toThrow(/fromModelMessages/);
  });

  it('refuses what a state cannot hold, naming where it is', () => {
    const reference = [
      {
        role: 'user',
        content: [
          {
            type: 'file',
            mediaType: 'image/png',
            data: { type: 'reference', reference: { openai: 'file-1' } },
          },
        ],
      },
    ];
    expect(() => fromModelMessages(reference)).toThrow(InvalidArgumentError);
    expect(() => fromModelMessages(reference)).toThrow(/messages\[0\]\.content\[0\]\.data/);
    expect(() => fromModelMessages([{ role: 'developer', content: 'x' }])).toThrow(/messages\[0\]\.role/);
    expect(() => fromModelMessages([{ role: 'user', content: [null] }])).toThrow(
      /messages\[0\]\.content\[0\]/,
    );
    expect(() => fromModelMessages([{ role: 'user', content: 42 }])).toThrow(/messages\[0\]\.content/);
    expect(() =>
      fromModelMessages([{ role: 'tool', content: [{ type: 'tool-result', output: {} }] }]),
    ).toThrow(/output/);
  });
});
