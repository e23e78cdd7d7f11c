import {
  AbstractChat,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  lastAssistantMessageIsCompleteWithApprovalResponses,
  type UIMessage,
} from 'ai6';
import { describe, expect, it } from 'vitest';
import { scriptedDriver } from '../../src/index';
import { lookup, partsOf, startChat, transferTool } from '../support/chat-fixtures';

/** AI SDK 6's chat client (what `npm install ai` gives on Node 20), with its state kept plainly. */
class Ai6Chat extends AbstractChat<UIMessage> {
  constructor(init: ChatInit<UIMessage>) {
    const state: ChatState<UIMessage> = {
      status: 'ready' as ChatStatus,
      error: undefined,
      messages: [],
      pushMessage: (message) => {
        state.messages = [...state.messages, message];
      },
      popMessage: () => {
        state.messages = state.messages.slice(0, -1);
      },
      replaceMessage: (index, message) => {
        state.messages = state.messages.map((m, i) => (i === index ? message : m));
      },
      snapshot: (thing) => structuredClone(thing),
    };
    super({ ...init, state });
  }
}

describe('createChatHandler with the chat client of AI SDK 6', () => {
  it('streams a tool call and the answer, and carries an approval through to the end of the run', async () => {
    const ledger: string[] = [];
    const { api } = await startChat({
      tools: { lookup, transfer: transferTool(ledger) },
      driver: scriptedDriver([
        { toolCalls: [{ name: 'lookup', args: { city: 'Lisbon' } }] },
        { text: 'Paying.', toolCalls: [{ name: 'transfer', args: { to: 'bob', amount: 5 }, id: 't1' }] },
        { text: 'Paid.' },
      ]),
    });
    const errors: Error[] = [];
    const finished: string[] = [];
    let bothFinished!: () => void;
    const secondFinish = new Promise<void>((resolve) => {
      bothFinished = resolve;
    });
    const chat = new Ai6Chat({
      id: 'ai6',
      transport: new DefaultChatTransport({ api }),
      onError: (error) => errors.push(error),
      onFinish: ({ message }) => {
        if (finished.push(message.id) === 2) bothFinished();
      },
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
    });
    await chat.sendMessage({ text: 'Look Lisbon up, then pay bob 5' });
    expect(errors).toEqual([]);
    const asked = partsOf(chat.lastMessage);
    expect(asked.map((p) => [p.type, p.state])).toEqual([
      ['step-start', undefined],
      ['tool-lookup', 'output-available'],
      ['step-start', undefined],
      ['text', 'done'],
      ['tool-transfer', 'approval-requested'],
    ]);

    // sendAutomaticallyWhen sends the answered approval by itself; its response ends with the run.
    await chat.addToolApprovalResponse({ id: 't1', approved: true });
    await secondFinish;
    expect(new Set(finished).size).toBe(1); // both responses built the same assistant message
    expect(errors).toEqual([]);
    expect(ledger).toEqual(['bob:5']);
    expect(chat.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(partsOf(chat.lastMessage).map((p) => [p.type, p.state])).toEqual([
      ['step-start', undefined],
      ['tool-lookup', 'output-available'],
      ['step-start', undefined],
      ['text', 'done'],
      ['tool-transfer', 'output-available'],
      ['step-start', undefined],
      ['text', 'done'],
    ]);
    expect(chat.status).toBe('ready');
  });
});
