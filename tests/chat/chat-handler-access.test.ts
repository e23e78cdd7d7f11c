import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import type { ChatAccess } from '../../src/chat/chat-routes';
import { toNodeHandler } from '../../src/chat/node-handler';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { gate, startChat, transferTool } from '../support/chat-fixtures';
import { postJson, readChunks, userMessageBody } from '../support/ui-stream';

const payScript = () =>
  scriptedDriver([
    { toolCalls: [{ name: 'transfer', args: { to: 'bob', amount: 1 }, id: 't1' }] },
    { text: 'ok' },
  ]);
const approvalBody = (chatId: string) =>
  JSON.stringify({
    id: chatId,
    messages: [
      {
        id: 'a',
        role: 'assistant',
        parts: [
          {
            type: 'tool-transfer',
            toolCallId: 't1',
            state: 'approval-responded',
            input: { to: 'bob', amount: 1 },
            approval: { id: 't1', approved: true },
          },
        ],
      },
    ],
  });

describe('createChatHandler({ authorize })', () => {
  it('asks for each request with its chat id and action; false answers 403 and runs nothing', async () => {
    const ledger: string[] = [];
    const asked: ChatAccess[] = [];
    let allowed = true;
    const { api, store } = await startChat(
      { tools: { transfer: transferTool(ledger) }, driver: payScript() },
      {
        authorize: async (request, access) => {
          expect(request).toBeInstanceOf(Request);
          asked.push(access);
          return allowed;
        },
      },
    );
    await readChunks(await postJson(api, userMessageBody('mine', 'Pay')));
    expect(asked).toEqual([{ chatId: 'mine', action: 'write' }]);
    const version = (await store.load('mine'))?.version;

    allowed = false;
    asked.length = 0;
    const refused = [
      await postJson(api, userMessageBody('theirs', 'Hi')),
      await postJson(api, approvalBody('mine')),
      await fetch(`${api}/mine/messages`),
      await fetch(`${api}/mine/stream`),
    ];
    expect(refused.map((r) => r.status)).toEqual([403, 403, 403, 403]);
    for (const response of refused) {
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe('FORBIDDEN');
    }
    expect(asked).toEqual([
      { chatId: 'theirs', action: 'write' },
      { chatId: 'mine', action: 'decide' },
      { chatId: 'mine', action: 'read' },
      { chatId: 'mine', action: 'read' },
    ]);
    expect(await store.list()).toEqual(['mine']);
    expect((await store.load('mine'))?.version).toBe(version);
    expect(ledger).toEqual([]);

    allowed = true;
    expect((await fetch(`${api}/mine/messages`)).status).toBe(200);
    await readChunks(await postJson(api, approvalBody('mine')));
    expect(ledger).toEqual(['bob:1']);
  });

  it('refuses a body that is not application/json (415): a cross-site form cannot post', async () => {
    const { api, store } = await startChat({ driver: scriptedDriver([{ text: 'hi' }]) });
    for (const type of ['text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', null]) {
      const response = await fetch(api, {
        method: 'POST',
        ...(type && { headers: { 'content-type': type } }),
        body: userMessageBody('form', 'Hi'),
      });
      expect(response.status).toBe(415);
      expect(((await response.json()) as { error: { code: string } }).error.code).toBe(
        'UNSUPPORTED_MEDIA_TYPE',
      );
    }
    const charset = await fetch(api, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: userMessageBody('json', 'Hi'),
    });
    expect(charset.status).toBe(200);
    await readChunks(charset);
    expect(await store.list()).toEqual(['json']);
  });
});

describe('toNodeHandler', () => {
  it('ends the response of a client that left before the answer, and cancels its body', async () => {
    const answer = gate();
    const arrived = gate();
    const left = gate();
    const cancelled = gate();
    const handler = async () => {
      arrived.open();
      await answer.opened;
      // a stream that never ends by itself, as a long run's would
      const body = new ReadableStream<Uint8Array>({
        pull: () => new Promise(() => undefined),
        cancel: () => cancelled.open(),
      });
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } });
    };
    const node = toNodeHandler(handler);
    const ended = gate();
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      res.on('close', () => left.open());
      const end = res.end.bind(res);
      res.end = ((...args: Parameters<typeof res.end>) => {
        ended.open();
        return end(...args);
      }) as typeof res.end;
      node(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const client = new AbortController();
      const request = fetch(`http://127.0.0.1:${port}/`, { signal: client.signal }).catch(
        (error: unknown) => error,
      );
      await arrived.opened;
      client.abort();
      expect(await request).toMatchObject({ name: 'AbortError' });
      await left.opened; // the server has seen the client go
      answer.open();
      await Promise.all([cancelled.opened, ended.opened]);
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
