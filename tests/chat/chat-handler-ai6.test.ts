import { DefaultChatTransport, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai6';
import { describe, expect, it } from 'vitest';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { Ai6Chat } from '../support/ai6-chat';
import { lookup, partsOf, startChat, transferTool } from '../support/chat-fixtures';

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
