import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { defineTool } from '../../src/tools/define-tool';
import { chatClient } from '../support/ai-chat';
import { ai6ChatClient } from '../support/ai6-chat';
import { gate, partsOf, startChat, transferTool } from '../support/chat-fixtures';
import { postJson, readChunks, userMessageBody } from '../support/ui-stream';

const SECRET = 'a secret of the chat server';
const payScript = () =>
  scriptedDriver([
    { text: 'Paying.', toolCalls: [{ name: 'transfer', args: { to: 'bob', amount: 40 }, id: 't1' }] },
    { text: 'Paid.' },
  ]);
const payerTask = (id: string) => ({ name: 'payer', args: { task: 'pay bob' }, id });
/** The root asks its `payer` subagent (`calls` of it in parallel); each payer's transfer needs approval. */
function nestedPay(ledger: string[], calls = ['p1']) {
  return {
    driver: scriptedDriver([{ toolCalls: calls.map(payerTask) }, { text: 'All paid.' }]),
    subagents: {
      agents: {
        payer: {
          description: 'Pays people',
          driver: scriptedDriver([
            { toolCalls: [{ name: 'transfer', args: { to: 'bob', amount: 40 }, id: 't1' }] },
            { text: 'paid' },
          ]),
          tools: { transfer: transferTool(ledger) },
        },
      },
    },
  };
}

const clients = [
  ['AI SDK 7', chatClient],
  ['AI SDK 6', ai6ChatClient],
] as const;

describe.each(clients)('approvals in a chat, with the chat client of %s', (_sdk, client) => {
  it('with approvalSecret: the approval request carries the signature, the client sends it back, the call runs', async () => {
    const ledger: string[] = [];
    const { api, store, logged } = await startChat({
      tools: { transfer: transferTool(ledger) },
      driver: payScript(),
      approvalSecret: SECRET,
    });
    const { chat, errors } = client(api, 'signed');
    await chat.sendMessage({ text: 'Pay bob 40' });
    const signature = (await store.load('signed'))?.state.pendingApprovals()[0]?.signature;
    expect(signature).toBeDefined();
    expect(partsOf(chat.lastMessage).find((p) => p.type === 'tool-transfer')).toMatchObject({
      state: 'approval-requested',
      approval: { id: 't1', signature },
    });
    await chat.addToolApprovalResponse({ id: 't1', approved: true });
    await chat.sendMessage();
    expect(errors).toEqual([]);
    expect(logged).toEqual([]);
    expect(ledger).toEqual(['bob:40']);
    expect(partsOf(chat.lastMessage).at(-1)).toMatchObject({ type: 'text', text: 'Paid.' });
  });

  it('a call waiting inside a subagent is a tool part of its own; approving it there runs it', async () => {
    const ledger: string[] = [];
    const { api, store } = await startChat({ ...nestedPay(ledger), approvalSecret: SECRET });
    const { chat, errors } = client(api, 'nested');
    await chat.sendMessage({ text: 'Pay bob 40' });
    expect(errors).toEqual([]);
    const asked = partsOf(chat.lastMessage).filter((p) => p.type.startsWith('tool-'));
    expect(asked).toMatchObject([
      { type: 'tool-payer', toolCallId: 'p1', state: 'input-available' },
      {
        type: 'tool-transfer',
        toolCallId: 'p1/t1',
        state: 'approval-requested',
        input: { to: 'bob', amount: 40 },
        approval: { id: 'p1/t1' },
      },
    ]);
    // a reloaded page gets the same part from the stored conversation
    const { messages } = (await (await fetch(`${api}/nested/messages`)).json()) as { messages: UIMessage[] };
    expect(partsOf(messages[1]).filter((p) => p.type.startsWith('tool-'))).toEqual(asked);

    await chat.addToolApprovalResponse({ id: 'p1/t1', approved: true });
    await chat.sendMessage();
    expect(errors).toEqual([]);
    expect(ledger).toEqual(['bob:40']);
    expect((await store.load('nested'))?.state.finalResponse()).toBe('All paid.');
    expect(partsOf(chat.lastMessage).filter((p) => p.type.startsWith('tool-'))).toMatchObject([
      { type: 'tool-payer', state: 'output-available', output: 'paid' },
      { type: 'tool-transfer', toolCallId: 'p1/t1', state: 'output-available', output: 'sent 40 to bob' },
    ]);
  });

  it('two parallel calls of one subagent waiting on the same id are two parts, each decided on its own', async () => {
    const ledger: string[] = [];
    const { api } = await startChat({ ...nestedPay(ledger, ['p1', 'p2']), approvalSecret: SECRET });
    const { chat, errors } = client(api, 'twins');
    await chat.sendMessage({ text: 'Pay bob twice' });
    expect(
      partsOf(chat.lastMessage)
        .filter((p) => p.type === 'tool-transfer')
        .map((p) => [p.toolCallId, p.state]),
    ).toEqual([
      ['p1/t1', 'approval-requested'],
      ['p2/t1', 'approval-requested'],
    ]);
    await chat.addToolApprovalResponse({ id: 'p1/t1', approved: false, reason: 'once is enough' });
    await chat.addToolApprovalResponse({ id: 'p2/t1', approved: true });
    await chat.sendMessage();
    expect(errors).toEqual([]);
    expect(ledger).toEqual(['bob:40']);
    expect(
      partsOf(chat.lastMessage)
        .filter((p) => p.type === 'tool-transfer')
        .map((p) => [p.toolCallId, p.state]),
    ).toEqual([
      ['p1/t1', 'output-denied'],
      ['p2/t1', 'output-available'],
    ]);
  });

  it('a client reloaded while the answer after an approval streams follows it to the end', async () => {
    const held = gate();
    const entered = gate();
    const transfer = defineTool({
      description: 'Send money',
      inputSchema: z.object({ to: z.string() }),
      needsApproval: true,
      execute: async ({ to }) => {
        entered.open();
        await held.opened;
        return `released to ${to}`;
      },
    });
    const { api } = await startChat({
      tools: { transfer },
      driver: scriptedDriver([
        { text: 'Paying.', toolCalls: [{ name: 'transfer', args: { to: 'bob' }, id: 't1' }] },
        { text: 'Paid.' },
      ]),
    });
    const before = client(api, 'reload');
    await before.chat.sendMessage({ text: 'Pay bob' });
    await before.chat.addToolApprovalResponse({ id: 't1', approved: true });
    const approved = before.chat.sendMessage();
    await entered.opened;
    const { messages } = (await (await fetch(`${api}/reload/messages`)).json()) as { messages: UIMessage[] };
    const after = client(api, 'reload', { messages } as never);
    const answered = after.responded('GET');
    const resumed = after.chat.resumeStream();
    expect(await answered).toBe(200);
    held.open();
    await Promise.all([approved, resumed]);
    expect(after.errors).toEqual([]);
    expect(before.errors).toEqual([]);
    expect(partsOf(after.chat.lastMessage).map((p) => [p.type, p.state])).toEqual([
      ['step-start', undefined],
      ['text', 'done'],
      ['tool-transfer', 'output-available'],
      ['step-start', undefined],
      ['text', 'done'],
    ]);
    expect(partsOf(after.chat.lastMessage)[2]?.output).toBe('released to bob');
  });
});

describe('approvals in a chat with approvalSecret: what the handler refuses', () => {
  it('an approval without the signature the request gave, or with another one, is refused (409); nothing runs', async () => {
    const ledger: string[] = [];
    const { api, store } = await startChat({
      tools: { transfer: transferTool(ledger) },
      driver: payScript(),
      approvalSecret: SECRET,
    });
    await readChunks(await postJson(api, userMessageBody('forged', 'Pay')));
    const version = (await store.load('forged'))?.version;
    for (const signature of [undefined, 'forged']) {
      const body = JSON.stringify({
        id: 'forged',
        messages: [
          {
            id: 'a',
            role: 'assistant',
            parts: [
              {
                type: 'tool-transfer',
                toolCallId: 't1',
                state: 'approval-responded',
                input: { to: 'bob', amount: 40 },
                approval: { id: 't1', approved: true, ...(signature && { signature }) },
              },
            ],
          },
        ],
      });
      const response = await postJson(api, body);
      expect(response.status).toBe(409);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
        'APPROVAL_SIGNATURE_INVALID',
      );
    }
    expect((await store.load('forged'))?.version).toBe(version);
    expect(ledger).toEqual([]);
  });
});
