/**
 * Issue #44 item 6: the page can tell a call a crash interrupted (it may already have run) from a
 * new approval: the stream's `tool-approval-request` and the stored UI messages carry the reason
 * (`'interrupted'` or `'approval'`) where AI SDK 6's and 7's chat clients keep it, the tool part's
 * `approval.descriptor`.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createChatHandler } from '../../src/chat/chat-handler';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { defineTool } from '../../src/tools/define-tool';
import { AgentStream } from '../../src/ui/agent-stream';
import { chatClient, serveChat } from '../support/ai-chat';
import { ai6ChatClient } from '../support/ai6-chat';
import { partsOf } from '../support/chat-fixtures';

/** An agent whose `pay` needs approval; its model asks to pay Ana 40, then says it is done. */
function payAgent(store = new InMemorySessionStore()) {
  const pay = defineTool({
    description: 'Pay someone',
    inputSchema: z.object({ to: z.string(), amount: z.number() }),
    needsApproval: true,
    execute: async ({ to, amount }) => `paid ${amount} to ${to}`,
  });
  const driver = scriptedDriver([
    { toolCalls: [{ id: 'c1', name: 'pay', args: { to: 'ana', amount: 40 } }] },
    { text: 'Paid.' },
  ]);
  return { agent: createAgent({ driver, tools: { pay }, store }), store };
}

/** A session as a process killed while the approved `pay` ran leaves it: the call started, no result. */
async function interruptedSession(chatId: string) {
  const { agent, store } = payAgent();
  const waiting = await agent.execute(AgentState.empty().withUserMessage('Pay Ana 40'), {
    sessionId: chatId,
  });
  const stored = await store.load(chatId);
  const started = waiting.withApprovalDecision('c1', { type: 'approve' }).withToolsStarting(['c1']);
  await store.save(chatId, started, stored?.version ?? null);
  return { agent, store };
}

const approvalOf = (parts: { type: string; approval?: unknown }[]) =>
  parts.find((p) => p.type === 'tool-pay')?.approval;

describe('the reason a call waits, in the chat', () => {
  it.each([
    ['AI SDK 7', chatClient],
    ['AI SDK 6', ai6ChatClient],
  ] as const)(
    "a new approval: the stream's request and the stored message say 'approval' (%s client)",
    async (_, client) => {
      const { agent } = payAgent();
      const server = await serveChat(createChatHandler({ agent }));
      try {
        const { chat, errors } = client(server.api, 'asked');
        await chat.sendMessage({ text: 'Pay Ana 40' });
        expect(errors).toEqual([]);
        const live = approvalOf(partsOf(chat.lastMessage as never));
        expect(live).toMatchObject({ id: 'c1', descriptor: { reason: 'approval' } });
        const { messages } = (await (await fetch(`${server.api}/asked/messages`)).json()) as {
          messages: { parts: { type: string; approval?: unknown }[] }[];
        };
        expect(approvalOf(messages.at(-1)?.parts ?? [])).toEqual(live);
      } finally {
        await server.close();
      }
    },
  );

  it("a call a crash interrupted: the stored message and the resumed run's stream say 'interrupted'", async () => {
    const { agent } = await interruptedSession('crashed');
    const server = await serveChat(createChatHandler({ agent }));
    try {
      const { messages } = (await (await fetch(`${server.api}/crashed/messages`)).json()) as {
        messages: { parts: { type: string; state?: string; approval?: unknown }[] }[];
      };
      const part = messages.at(-1)?.parts.find((p) => p.type === 'tool-pay');
      expect(part).toMatchObject({
        state: 'approval-requested',
        approval: { id: 'c1', descriptor: { reason: 'interrupted' } },
      });
      // the chat client rebuilds the stored message and approves: the call runs once, as decided
      const { chat, errors } = chatClient(server.api, 'crashed', { messages: messages as never });
      await chat.addToolApprovalResponse({ id: 'c1', approved: true });
      await chat.sendMessage();
      expect(errors).toEqual([]);
      expect(partsOf(chat.lastMessage).find((p) => p.type === 'tool-pay')).toMatchObject({
        state: 'output-available',
        output: 'paid 40 to ana',
      });
    } finally {
      await server.close();
    }
    // the run resumed after the crash asks again, as interrupted
    const { agent: resumed } = await interruptedSession('resumed');
    const stream = new AgentStream((onEvent) => resumed.resume('resumed', { onEvent }));
    const chunks: { type: string; approvalDescriptor?: unknown }[] = [];
    for await (const chunk of stream.toUIMessageStream() as unknown as AsyncIterable<{ type: string }>)
      chunks.push(chunk);
    expect(chunks.find((c) => c.type === 'tool-approval-request')).toMatchObject({
      approvalId: 'c1',
      approvalDescriptor: { reason: 'interrupted' },
    });
  });
});
