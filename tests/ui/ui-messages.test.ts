import type { UIMessage as SdkUIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { toChatUIMessages, toUIMessages } from '../../src/messages/ui-messages';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { Message } from '../../src/state/message';
import { defineTool } from '../../src/tools/define-tool';
import { toUIMessageChunks } from '../../src/ui/ui-message-chunks';

const transfer = defineTool({
  description: 'Send money',
  inputSchema: z.object({ to: z.string() }),
  needsApproval: true,
  execute: async ({ to }) => ({ sent: to }),
});
const broken = defineTool({
  description: 'Always fails',
  inputSchema: z.object({}),
  execute: async () => {
    throw new Error('disk full');
  },
});

function payAgent() {
  return createAgent({
    store: new InMemorySessionStore(),
    tools: { transfer, broken },
    driver: scriptedDriver([
      { text: 'Trying.', toolCalls: [{ name: 'broken', args: {}, id: 'b1' }] },
      {
        toolCalls: [
          { name: 'transfer', args: { to: 'bob' }, id: 't1' },
          { name: 'transfer', args: { to: 'eve' }, id: 't2' },
        ],
      },
      { text: 'Done.' },
    ]),
  });
}

describe('toChatUIMessages', () => {
  it('shows a session as the chat client holds it: user messages, one assistant message per execution, calls in their states', async () => {
    const agent = payAgent();
    const waiting = await agent.chat('s', 'Pay bob and eve');
    const asked = toChatUIMessages(waiting);
    const sdk: SdkUIMessage[] = asked; // the AI SDK's chat client takes them as they are
    expect(sdk.map((m) => [m.role, m.id])).toEqual([
      ['user', 'user-0'],
      ['assistant', waiting.executionId()],
    ]);
    expect(asked[1]?.parts).toEqual([
      { type: 'step-start' },
      { type: 'text', text: 'Trying.', state: 'done' },
      { type: 'tool-broken', toolCallId: 'b1', state: 'output-error', input: {}, errorText: 'disk full' },
      { type: 'step-start' },
      {
        type: 'tool-transfer',
        toolCallId: 't1',
        state: 'approval-requested',
        input: { to: 'bob' },
        approval: { id: 't1', descriptor: { reason: 'approval' } },
      },
      {
        type: 'tool-transfer',
        toolCallId: 't2',
        state: 'approval-requested',
        input: { to: 'eve' },
        approval: { id: 't2', descriptor: { reason: 'approval' } },
      },
    ]);

    const partly = waiting.withApprovalDecision('t2', { type: 'reject', reason: 'unknown payee' });
    expect(toChatUIMessages(partly)[1]?.parts.slice(-1)).toEqual([
      {
        type: 'tool-transfer',
        toolCallId: 't2',
        state: 'approval-responded',
        input: { to: 'eve' },
        approval: { id: 't2', approved: false, reason: 'unknown payee' },
      },
    ]);

    const done = await agent.decide('s', [
      { toolCallId: 't1', type: 'approve' },
      { toolCallId: 't2', type: 'reject', reason: 'unknown payee' },
    ]);
    const after = toChatUIMessages((await agent.chat('s', 'Thanks')).withSystemPrompt('ignored in the chat'));
    expect(after.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    expect(after[1]?.id).toBe(done.executionId());
    expect(after[1]?.parts.slice(4)).toEqual([
      {
        type: 'tool-transfer',
        toolCallId: 't1',
        state: 'output-available',
        input: { to: 'bob' },
        output: '{"sent":"bob"}',
      },
      {
        type: 'tool-transfer',
        toolCallId: 't2',
        state: 'output-error',
        input: { to: 'eve' },
        errorText: 'Rejected by a person: unknown payee',
      },
      { type: 'step-start' },
      { type: 'text', text: 'Done.', state: 'done' },
    ]);
  });

  it('toUIMessageChunks rebuilds a message: steps, text, inputs, approvals and outputs', async () => {
    const waiting = await payAgent().chat('s', 'Pay');
    const message = toChatUIMessages(waiting.withApprovalDecision('t1', { type: 'approve' }))[1];
    expect(message && toUIMessageChunks(message).map((c) => c.type)).toEqual([
      'start-step',
      'text-start',
      'text-delta',
      'text-end',
      'tool-input-available',
      'tool-output-error',
      'finish-step',
      'start-step',
      'tool-input-available',
      'tool-approval-request',
      'tool-input-available',
      'tool-approval-request',
    ]);
  });

  it("keeps the user's images and files, and is the one toUIMessages", async () => {
    const agent = createAgent({ driver: scriptedDriver([{ text: 'A cat.' }]) });
    const state = await agent.execute(
      AgentState.empty().withUserMessage([
        { type: 'text', text: 'What is in these?' },
        { type: 'file', mediaType: 'image/png', data: 'iVBORw==' },
        { type: 'file', mediaType: 'application/pdf', data: 'https://example.com/a.pdf', filename: 'a.pdf' },
      ]),
    );
    const shown = toChatUIMessages(state);
    expect(shown[0]).toEqual({
      id: 'user-0',
      role: 'user',
      parts: [
        { type: 'text', text: 'What is in these?', state: 'done' },
        { type: 'file', mediaType: 'image/png', url: 'data:image/png;base64,iVBORw==' },
        { type: 'file', mediaType: 'application/pdf', url: 'https://example.com/a.pdf', filename: 'a.pdf' },
      ],
    });
    expect(shown[1]?.id).toBe(state.executionId());
    expect(toUIMessages(state)).toEqual(shown);
    const sdk: SdkUIMessage[] = shown;
    expect(sdk).toHaveLength(2);
  });

  it('shows reasoning, provider-executed calls with their results, and messages no agent ran', () => {
    const meta = { openai: { itemId: 'i1' } };
    const ui = toUIMessages([
      Message.user('Search'),
      Message.of({
        role: 'assistant',
        content: 'Found.',
        parts: [
          { type: 'reasoning', text: 'Look it up.', providerMetadata: meta },
          {
            type: 'tool-call',
            toolCallId: 'w1',
            toolName: 'web_search',
            input: { q: 'x' },
            providerExecuted: true,
          },
          { type: 'tool-result', toolCallId: 'w1', toolName: 'web_search', output: { hits: 1 } },
          { type: 'text', text: 'Found.' },
        ],
        toolCalls: [{ id: 'c1', name: 'add', args: { a: 1 } }],
      }),
      Message.toolResult({ id: 'c1', name: 'add' }, '2'),
      Message.assistant('Done.'),
    ]);
    expect(ui.map((m) => [m.id, m.role])).toEqual([
      ['user-0', 'user'],
      ['assistant-1', 'assistant'],
    ]);
    expect(ui[1]?.parts).toEqual([
      { type: 'step-start' },
      { type: 'reasoning', text: 'Look it up.', state: 'done', providerMetadata: meta },
      {
        type: 'tool-web_search',
        toolCallId: 'w1',
        input: { q: 'x' },
        providerExecuted: true,
        state: 'output-available',
        output: { hits: 1 },
      },
      { type: 'text', text: 'Found.', state: 'done' },
      { type: 'tool-add', toolCallId: 'c1', input: { a: 1 }, state: 'output-available', output: '2' },
      { type: 'step-start' },
      { type: 'text', text: 'Done.', state: 'done' },
    ]);
  });
});
