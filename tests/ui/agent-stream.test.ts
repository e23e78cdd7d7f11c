import { readUIMessageStream, type UIMessage, type UIMessageChunk } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ApprovalError } from '../../src/state/approval-error';
import type { AgentEvent } from '../../src/state/loop-events';
import { defineTool } from '../../src/tools/define-tool';

const add = defineTool({
  description: 'Add',
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => a + b,
});
const script = () =>
  scriptedDriver([{ toolCalls: [{ name: 'add', args: { a: 2, b: 3 }, id: 'c1' }] }, { text: 'It is 5.' }]);
const question = () => AgentState.empty().withUserMessage('2 + 3?');

async function readAll<T>(stream: ReadableStream<T>): Promise<T[]> {
  const all: T[] = [];
  for await (const item of stream) all.push(item);
  return all;
}

describe('agent.stream()', () => {
  it("yields the run's events in order, the same as onEvent gets, and resolves the final state", async () => {
    const heard: AgentEvent[] = [];
    await createAgent({ driver: script(), tools: { add } }).execute(question(), {
      onEvent: (e) => heard.push(e),
    });
    const stream = createAgent({ driver: script(), tools: { add } }).stream(question());
    const events: AgentEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(events.map((e) => e.type)).toEqual(heard.map((e) => e.type));
    expect(events.find((e) => e.type === 'tool.finished')).toMatchObject({
      toolCallId: 'c1',
      ok: true,
      value: 5,
    });
    const state = await stream.state;
    expect(state.status()).toBe('completed');
    expect(state.finalResponse()).toBe('It is 5.');
  });

  it("gives the caller's onEvent every event of the streamed run, with its source, as the stream gets them", async () => {
    const heard: string[] = [];
    const stream = createAgent({ driver: script(), tools: { add } }).stream(question(), {
      onEvent: (e, source) => heard.push(`${e.type}:${source.step?.stepType() ?? '-'}`),
    });
    const events: AgentEvent[] = [];
    for await (const event of stream) events.push(event);
    expect(heard.map((h) => h.split(':')[0])).toEqual(events.map((e) => e.type));
    expect(heard).toContain('tool.started:tool_execution');
  });

  it("gives a UI message stream the AI SDK's readUIMessageStream builds the assistant message from", async () => {
    const stream = createAgent({ driver: script(), tools: { add } }).stream(question());
    let last: UIMessage | undefined;
    for await (const message of readUIMessageStream({
      stream: stream.toUIMessageStream() as ReadableStream<UIMessageChunk>,
      terminateOnError: true,
    })) {
      last = message;
    }
    const state = await stream.state;
    expect(last?.id).toBe(state.executionId());
    expect(last?.parts).toMatchObject([
      { type: 'step-start' },
      { type: 'tool-add', toolCallId: 'c1', state: 'output-available', input: { a: 2, b: 3 }, output: 5 },
      { type: 'step-start' },
      { type: 'text', text: 'It is 5.', state: 'done' },
    ]);
  });

  it('serves every reader from the start, also after the run ended', async () => {
    const stream = createAgent({ driver: script(), tools: { add } }).stream(question());
    const first = await readAll(stream.toUIMessageStream());
    await stream.state;
    expect(await readAll(stream.toUIMessageStream())).toEqual(first);
    const response = stream.toUIMessageStreamResponse({ headers: { 'x-chat': '1' } });
    expect(response.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    expect(response.headers.get('x-chat')).toBe('1');
    const text = await response.text();
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(text.split('\n\n').filter(Boolean)).toHaveLength(first.length + 1);
  });

  it('a reader that cancels only stops reading: the run goes on to its end', async () => {
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    const hold = defineTool({
      description: 'Hold',
      inputSchema: z.object({}),
      execute: () => released.then(() => 'held'),
    });
    const agent = createAgent({
      tools: { hold },
      driver: scriptedDriver([{ toolCalls: [{ name: 'hold', args: {} }] }, { text: 'Done.' }]),
    });
    const stream = agent.stream(question());
    const reader = stream.toUIMessageStream().getReader();
    expect((await reader.read()).value).toMatchObject({ type: 'start' });
    await reader.cancel();
    release();
    expect((await stream.state).finalResponse()).toBe('Done.');
    expect((await readAll(stream.toUIMessageStream())).at(-1)).toMatchObject({
      type: 'finish',
      finishReason: 'stop',
    });
  });

  it('a run that cannot start: the iteration throws, state rejects, the UI stream ends with an error chunk', async () => {
    const transfer = defineTool({
      description: 'Send',
      inputSchema: z.object({}),
      needsApproval: true,
      execute: async () => 'sent',
    });
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [{ name: 'transfer', args: {} }] }]),
      tools: { transfer },
    });
    const waiting = await agent.execute(question());
    expect(waiting.pendingApprovals()).toHaveLength(1);

    const stream = agent.stream(waiting);
    await expect(stream.state).rejects.toBeInstanceOf(ApprovalError);
    await expect(async () => {
      for await (const _ of stream) expect.unreachable('no event before the refusal');
    }).rejects.toThrow(/waits for a decision on approval/);
    expect(await readAll(stream.toUIMessageStream())).toEqual([
      { type: 'start' },
      { type: 'error', errorText: 'The agent could not answer (APPROVAL_PENDING).' },
      { type: 'finish', finishReason: 'error' },
    ]);
  });
});
