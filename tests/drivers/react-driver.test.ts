import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { convertArrayToReadableStream, MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { reactDriver, toReActPrompt } from '../../src/drivers/react-driver';
import { parseReActReply, reactInstructions } from '../../src/drivers/react-protocol';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { AgentStepType } from '../../src/state/agent-step-type';
import { ExecutionStatus } from '../../src/state/execution-status';
import { Message } from '../../src/state/message';
import { add, failing, waitForState } from '../support/agents';

const usage: LanguageModelV4GenerateResult['usage'] = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: 3, text: 3, reasoning: undefined },
};
const reply = (text: string): LanguageModelV4GenerateResult => ({
  content: [{ type: 'text', text }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage,
  warnings: [],
});
const replies = (...texts: string[]) => new MockLanguageModelV4({ doGenerate: texts.map(reply) });
const promptText = (call: LanguageModelV4CallOptions | undefined) =>
  (call?.prompt ?? []).map((m) => ({
    role: m.role,
    text:
      typeof m.content === 'string'
        ? m.content
        : m.content.map((p) => ('text' in p ? p.text : `[${p.type}]`)).join(''),
  }));
const question = () => AgentState.empty().withUserMessage('What is 2 + 3?');

describe('parseReActReply', () => {
  it('reads a Thought, an Action and its JSON input', () => {
    expect(parseReActReply('Thought: add them\nAction: add\nAction Input: {"a": 2, "b": 3}')).toEqual({
      type: 'action',
      thought: 'add them',
      tool: 'add',
      input: { a: 2, b: 3 },
    });
  });

  it('accepts the forms models write: any case, a list-style tool name, fenced or multi-line JSON', () => {
    expect(
      parseReActReply('thought: x\nACTION: [add]\naction input: ```json\n{"a": 1,\n "b": 2}\n```'),
    ).toEqual({
      type: 'action',
      thought: 'x',
      tool: 'add',
      input: { a: 1, b: 2 },
    });
    expect(parseReActReply('Action: `add`\nAction Input: {"a": 1, "b": 2}')).toMatchObject({ tool: 'add' });
  });

  it('ignores an Observation the model invents and text after the JSON input', () => {
    const text =
      'Thought: t\nAction: add\nAction Input: {"a": 1, "b": 2} and then\nObservation: 3\nFinal Answer: 3';
    expect(parseReActReply(text)).toEqual({
      type: 'action',
      thought: 't',
      tool: 'add',
      input: { a: 1, b: 2 },
    });
  });

  it('reads a Final Answer over several lines; text before any label counts as the thought', () => {
    expect(parseReActReply('Let me think.\nFinal Answer: line one\nline two\n')).toEqual({
      type: 'final',
      thought: 'Let me think.',
      answer: 'line one\nline two',
    });
  });

  it('keeps an own __proto__ key of the input as data, touching no prototype', () => {
    const parsed = parseReActReply('Action: add\nAction Input: {"a": 1, "__proto__": {"x": 1}}');
    const input = (parsed as { input: Record<string, unknown> }).input;
    expect(Object.keys(input)).toEqual(['a', '__proto__']);
    expect(Object.getOwnPropertyDescriptor(input, '__proto__')?.value).toEqual({ x: 1 });
    expect(Object.getPrototypeOf(input)).toBe(Object.prototype);
  });

  it.each([
    ['The answer is 5.', 'neither an "Action:" nor a "Final Answer:"'],
    ['Action: add\nAction Input: {"a": 1}\nFinal Answer: 5', 'both an "Action:" and a "Final Answer:"'],
    ['Action: add\nAction Input: {}\nAction: add\nAction Input: {}', 'more than one "Action:"'],
    ['Final Answer: 1\nFinal Answer: 2', 'more than one "Final Answer:"'],
    ['Action: add', '"Action: add" is not followed by an "Action Input:" line'],
    ['Action:\nAction Input: {}', 'names no tool'],
    ['Action: add\nAction Input:', 'the "Action Input:" of add is empty'],
    ['Action: add\nAction Input: {a: 1}', 'the "Action Input:" of add is not valid JSON ('],
    ['Final Answer:   ', 'its "Final Answer:" is empty'],
  ])('refuses %j: %s', (text, reason) => {
    const parsed = parseReActReply(text);
    expect(parsed.type).toBe('invalid');
    expect(parsed.type === 'invalid' && parsed.reason).toContain(reason);
  });
});

describe('reactInstructions', () => {
  it('states the format and lists each tool with its description and input JSON Schema', () => {
    const text = reactInstructions([
      { name: 'add', description: 'Add two numbers', inputSchema: { type: 'object', required: ['a', 'b'] } },
      { name: 'now', inputSchema: { type: 'object' } },
    ]);
    expect(text).toContain('Action: the name of one tool, one of [add, now]');
    expect(text).toContain('Final Answer:');
    expect(text).toContain(
      '- add: Add two numbers\n  Input JSON Schema: {"type":"object","required":["a","b"]}',
    );
    expect(text).toContain('- now: (no description)');
  });
});

describe('the ReAct driver', () => {
  it('runs tools from text replies; the model sees results as Observation user messages', async () => {
    const model = replies('Action: add\nAction Input: {"a": 2, "b": 3}', 'Final Answer: 5');
    const agent = createAgent({ driver: reactDriver(model), tools: { add } });
    const state = await agent.execute(question());

    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.finalResponse()).toBe('5');
    expect(model.doGenerateCalls[0]?.tools).toBeUndefined();
    expect(model.doGenerateCalls[0]?.stopSequences).toEqual(['\nObservation:']);
    expect(promptText(model.doGenerateCalls[1]).slice(1)).toEqual([
      { role: 'user', text: 'What is 2 + 3?' },
      { role: 'assistant', text: 'Action: add\nAction Input: {"a": 2, "b": 3}' },
      { role: 'user', text: 'Observation: 5' },
    ]);
  });

  it('reports a tool error and an unknown tool as Observations, and the model recovers', async () => {
    const model = replies(
      'Action: failing\nAction Input: {}',
      'Action: multiply\nAction Input: {"a": 2, "b": 3}',
      'Final Answer: I could not compute it.',
    );
    const agent = createAgent({ driver: reactDriver(model), tools: { add, failing } });
    const state = await agent.execute(question());

    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.steps().map((s) => s.stepType())).toEqual([
      AgentStepType.Error,
      AgentStepType.Error,
      AgentStepType.FinalResponse,
    ]);
    const prompt = promptText(model.doGenerateCalls[2]);
    expect(prompt[3]).toEqual({ role: 'user', text: 'Observation: Error: tool exploded' });
    expect(prompt[5]).toEqual({
      role: 'user',
      text: "Observation: Error: Tool 'multiply' does not exist. Available tools: add, failing",
    });
  });

  it('keeps the answer alone in the conversation and shows the model its whole reply next time', async () => {
    const model = replies('Thought: easy.\nFinal Answer: 5', 'Final Answer: 6');
    const agent = createAgent({ driver: reactDriver(model) });
    const first = await agent.execute(question());
    expect(first.messages().map((m) => [m.role, m.content])).toEqual([
      ['user', 'What is 2 + 3?'],
      ['assistant', '5'],
    ]);
    await agent.execute(first.forNextExecution().withUserMessage('And 3 + 3?'));
    expect(promptText(model.doGenerateCalls[1]).slice(1)).toEqual([
      { role: 'user', text: 'What is 2 + 3?' },
      { role: 'assistant', text: 'Thought: easy.\nFinal Answer: 5' },
      { role: 'user', text: 'And 3 + 3?' },
    ]);
  });

  it('puts the state system prompt before the protocol and merges stop sequences with call options', async () => {
    const model = replies('Final Answer: 5');
    const driver = reactDriver(model, { callOptions: { stopSequences: ['END'], temperature: 0 } });
    await createAgent({ driver, tools: { add }, systemPrompt: 'Be brief.' }).execute(question());
    const call = model.doGenerateCalls[0];
    expect(call?.stopSequences).toEqual(['END', '\nObservation:']);
    expect(call?.temperature).toBe(0);
    const system = call?.prompt[0];
    expect(system?.role).toBe('system');
    expect(system?.content).toMatch(/^Be brief\.\n\nYou solve the task step by step/);
  });

  it('streams: text deltas are reported, and the reply is parsed once complete', async () => {
    const parts = ['Thought: sum.\nFinal', ' Answer', ': 5'];
    const model = new MockLanguageModelV4({
      doStream: async () => ({
        stream: convertArrayToReadableStream([
          { type: 'stream-start', warnings: [] },
          { type: 'text-start', id: 't' },
          ...parts.map((delta) => ({ type: 'text-delta' as const, id: 't', delta })),
          { type: 'text-end', id: 't' },
          { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
        ]),
      }),
    });
    const actor = createAgent({ driver: reactDriver(model, { stream: true }) }).createActor(question());
    const deltas: string[] = [];
    actor.on('text.delta', (event) => deltas.push(event.delta));
    actor.start();
    actor.send({ type: 'execute' });
    await waitForState(actor, (s) => s.value === 'completed');
    const state = actor.getSnapshot().context.state;
    actor.stop();

    expect(deltas).toEqual(parts);
    expect(state.finalResponse()).toBe('5');
    expect(state.usage().totalTokens).toBe(13);
  });
});

describe('toReActPrompt', () => {
  it('writes native tool calls of another driver as Action lines, and tool results as Observations', () => {
    const call = { id: 'c1', name: 'add', args: { a: 1, b: 2 } };
    const prompt = toReActPrompt('sys', [
      Message.user('1 + 2?'),
      Message.assistant('', [call]),
      Message.toolResult(call, '3'),
      Message.toolResult(call, 'Error: boom', true),
    ]);
    expect(prompt).toEqual([
      { role: 'system', content: 'sys' },
      { role: 'user', content: [{ type: 'text', text: '1 + 2?' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'Action: add\nAction Input: {"a":1,"b":2}' }] },
      { role: 'user', content: [{ type: 'text', text: 'Observation: 3' }] },
      { role: 'user', content: [{ type: 'text', text: 'Observation: Error: boom' }] },
    ]);
  });
});
