import type { UIMessage } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { AgentState } from '../../src/state/agent-state';
import { ApprovalError } from '../../src/state/approval-error';
import { defineTool } from '../../src/tools/define-tool';
import { chatClient } from '../support/ai-chat';
import { gate, lookup, partsOf, startChat, transferTool, types } from '../support/chat-fixtures';
import { postJson, readChunks, userMessageBody } from '../support/ui-stream';

describe('createChatHandler: resuming a stream (GET <api>/<id>/stream)', () => {
  /** An agent whose `hold` tool waits until the test opens the gate; `entered` resolves when it starts. */
  function heldChat() {
    const held = gate();
    const entered = gate();
    const hold = defineTool({
      description: 'Hold',
      inputSchema: z.object({}),
      execute: async () => {
        entered.open();
        await held.opened;
        return 'released';
      },
    });
    return { held, entered, hold };
  }

  it('replays the running stream from its start and follows it to the end; 204 when none runs', async () => {
    const { held, entered, hold } = heldChat();
    const { api } = await startChat({
      tools: { hold },
      driver: scriptedDriver([{ toolCalls: [{ name: 'hold', args: {}, id: 'h1' }] }, { text: 'Released.' }]),
    });
    expect((await fetch(`${api}/long/stream`)).status).toBe(204);
    const first = readChunks(await postJson(api, userMessageBody('long', 'Wait for it')));
    await entered.opened;
    const resumed = await fetch(`${api}/long/stream`);
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
    const replay = readChunks(resumed);
    held.open();
    const [original, replayed] = await Promise.all([first, replay]);
    expect(replayed).toEqual(original);
    expect(types(original)).toContain('text-delta');
    expect((await fetch(`${api}/long/stream`)).status).toBe(204);
  });

  it('a reloaded client (history from GET <api>/<id>/messages, then resumeStream) sees the run continue in the same message', async () => {
    const { held, entered, hold } = heldChat();
    const { api } = await startChat({
      tools: { hold, lookup },
      driver: scriptedDriver([
        { toolCalls: [{ name: 'lookup', args: { city: 'Lisbon' } }] },
        { toolCalls: [{ name: 'hold', args: {}, id: 'h1' }] },
        { text: 'Released.' },
      ]),
    });
    const before = chatClient(api, 'reload');
    const sent = before.chat.sendMessage({ text: 'Go' });
    await entered.opened;
    // "Reload": a new client loads the stored conversation and resumes the stream.
    const { messages } = (await (await fetch(`${api}/reload/messages`)).json()) as { messages: UIMessage[] };
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    const after = chatClient(api, 'reload', { messages });
    const answered = after.responded('GET');
    const resumed = after.chat.resumeStream();
    expect(await answered).toBe(200); // the run is still held: the stream it resumes is live
    held.open();
    await Promise.all([sent, resumed]);
    expect(after.errors).toEqual([]);
    expect(after.chat.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(after.chat.lastMessage?.id).toBe(messages[1]?.id);
    expect(partsOf(after.chat.lastMessage)).toEqual(partsOf(before.chat.lastMessage));
    expect(partsOf(after.chat.lastMessage).map((p) => p.type)).toEqual([
      'step-start',
      'tool-lookup',
      'step-start',
      'tool-hold',
      'step-start',
      'text',
    ]);
  });

  it('after an approval, the replay starts with the part of the message streamed before it', async () => {
    const { held, entered } = heldChat();
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
    const before = chatClient(api, 'pay-reload');
    await before.chat.sendMessage({ text: 'Pay bob' });
    await before.chat.addToolApprovalResponse({ id: 't1', approved: true });
    const approved = before.chat.sendMessage();
    await entered.opened;
    const { messages } = (await (await fetch(`${api}/pay-reload/messages`)).json()) as {
      messages: UIMessage[];
    };
    const after = chatClient(api, 'pay-reload', { messages });
    const answered = after.responded('GET');
    const resumed = after.chat.resumeStream();
    expect(await answered).toBe(200);
    held.open();
    await Promise.all([approved, resumed]);
    expect(after.errors).toEqual([]);
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

describe('createChatHandler: refused requests (nothing run, nothing saved)', () => {
  const user = (text: unknown) => ({ id: 'm', role: 'user', parts: [{ type: 'text', text }] });
  it.each([
    ['a body that is not JSON', 'POST', '', '{"id": ', 400, 'INVALID_JSON', /The body is not JSON/],
    [
      'no chat id',
      'POST',
      '',
      JSON.stringify({ messages: [user('hi')] }),
      400,
      'INVALID_REQUEST',
      /id: "id" \(the chat id\) must be a string/,
    ],
    [
      'no messages',
      'POST',
      '',
      JSON.stringify({ id: 'c', messages: [] }),
      400,
      'INVALID_REQUEST',
      /messages: "messages" is empty/,
    ],
    [
      'a chat id with a path',
      'POST',
      '',
      JSON.stringify({ id: '../etc', messages: [user('hi')] }),
      400,
      'INVALID_SESSION_ID',
      /Invalid session id "\.\.\/etc"/,
    ],
    [
      'a user message without text',
      'POST',
      '',
      JSON.stringify({ id: 'c', messages: [user('  ')] }),
      400,
      'EMPTY_MESSAGE',
      /no text/,
    ],
    [
      'a regenerate request',
      'POST',
      '',
      JSON.stringify({ id: 'c', messages: [user('hi')], trigger: 'regenerate-message' }),
      400,
      'REGENERATE_UNSUPPORTED',
      /send a new message/,
    ],
    [
      'an edit of an earlier message',
      'POST',
      '',
      JSON.stringify({ id: 'c', messages: [user('hi')], trigger: 'submit-message', messageId: 'm' }),
      400,
      'EDIT_UNSUPPORTED',
      /Editing an earlier message is not supported/,
    ],
    [
      'an assistant message without approval responses',
      'POST',
      '',
      JSON.stringify({ id: 'c', messages: [{ id: 'a', role: 'assistant', parts: [] }] }),
      400,
      'NOTHING_TO_ANSWER',
      /approval responses/,
    ],
    [
      'approvals for an unknown chat',
      'POST',
      '',
      JSON.stringify({
        id: 'c',
        messages: [
          {
            id: 'a',
            role: 'assistant',
            parts: [
              {
                type: 'tool-x',
                toolCallId: 't',
                state: 'approval-responded',
                approval: { id: 't', approved: true },
              },
            ],
          },
        ],
      }),
      404,
      'SESSION_NOT_FOUND',
      /No chat "c"/,
    ],
    ['another method', 'PUT', '', '{}', 405, 'METHOD_NOT_ALLOWED', /Use POST to chat/],
    ['an unknown GET', 'GET', '/c', undefined, 404, 'NOT_FOUND', /GET <api>\/<chat id>\/stream/],
    [
      'a resume with a bad chat id',
      'GET',
      '/a%20b/stream',
      undefined,
      400,
      'INVALID_SESSION_ID',
      /Invalid session id "a b"/,
    ],
    [
      'a body over maxBodyBytes',
      'POST',
      '',
      JSON.stringify({ id: 'c', messages: [user('x'.repeat(1024 * 1024))] }),
      413,
      'BODY_TOO_LARGE',
      /over 1048576 bytes/,
    ],
  ] as const)('%s', async (_name, method, path, body, status, code, message) => {
    const { api, store } = await startChat({ driver: scriptedDriver([{ text: 'hi' }]) });
    const response = await fetch(`${api}${path}`, {
      method,
      ...(body === undefined ? {} : { body, headers: { 'content-type': 'application/json' } }),
    });
    expect(response.status).toBe(status);
    const { error } = (await response.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe(code);
    expect(error.message).toMatch(message);
    expect(await store.list()).toEqual([]);
  });

  it('refuses a second message while the chat is answering (409 SESSION_BUSY), and finishes the first', async () => {
    const held = gate();
    const hold = defineTool({
      description: 'Hold',
      inputSchema: z.object({}),
      execute: () => held.opened.then(() => 'ok'),
    });
    const { api } = await startChat({
      tools: { hold },
      driver: scriptedDriver([{ toolCalls: [{ name: 'hold', args: {} }] }, { text: 'Done.' }]),
    });
    const first = await postJson(api, userMessageBody('busy', 'One'));
    const second = await postJson(api, userMessageBody('busy', 'Two'));
    expect(second.status).toBe(409);
    expect(((await second.json()) as { error: { code: string } }).error.code).toBe('SESSION_BUSY');
    held.open();
    expect((await readChunks(first)).at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
  });

  it('refuses a message while calls await approval, and decisions for calls that do not (409)', async () => {
    const ledger: string[] = [];
    const { api, store } = await startChat({
      tools: { transfer: transferTool(ledger) },
      driver: scriptedDriver([
        { toolCalls: [{ name: 'transfer', args: { to: 'bob', amount: 1 }, id: 't1' }] },
        { text: 'ok' },
      ]),
    });
    await readChunks(await postJson(api, userMessageBody('wait', 'Pay')));
    const version = (await store.load('wait'))?.version;
    const message = await postJson(api, userMessageBody('wait', 'Hello?'));
    expect(message.status).toBe(409);
    const { error } = (await message.json()) as { error: { code: string; message: string } };
    expect(error).toEqual({
      code: 'APPROVAL_PENDING',
      message: expect.stringContaining(`The run waits for a decision on approval 't1'`),
      pendingApprovals: ['t1'],
    });
    expect(error.message).toBe(
      ApprovalError.pending((await store.load('wait'))?.state as AgentState).message,
    );
    expect(error.message).toContain('addToolApprovalResponse({ id, approved })');
    expect(error.message).toContain('send this message again');
    const stale = JSON.stringify({
      id: 'wait',
      messages: [
        {
          id: 'a',
          role: 'assistant',
          parts: [
            {
              type: 'tool-transfer',
              toolCallId: 'zz',
              state: 'approval-responded',
              approval: { id: 'zz', approved: true },
            },
          ],
        },
      ],
    });
    const decision = await postJson(api, stale);
    expect(decision.status).toBe(409);
    expect(((await decision.json()) as { error: { code: string } }).error.code).toBe('APPROVAL_NOT_PENDING');
    expect((await store.load('wait'))?.version).toBe(version);
    expect(ledger).toEqual([]);
  });
});

describe('createChatHandler: a body without content-length', () => {
  it('stops reading once it is over maxBodyBytes and answers 413', async () => {
    const { api, store } = await startChat({ driver: scriptedDriver([{ text: 'hi' }]) });
    const piece = new TextEncoder().encode('x'.repeat(64 * 1024));
    let pieces = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pieces++ < 24) controller.enqueue(piece);
        else controller.close();
      },
    });
    const response = await fetch(api, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half',
    } as RequestInit);
    expect(response.status).toBe(413);
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('BODY_TOO_LARGE');
    expect(await store.list()).toEqual([]);
  });
});
