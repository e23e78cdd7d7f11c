/**
 * Issue #35: `authorize` applies to a chat's stream, its stop and the messages sent while it
 * answers (queued, steered), in every handler sharing the stream store, the one running the chat
 * and the others: a refused request gets 403 FORBIDDEN, and the run goes on as if it never came.
 */
import { describe, expect, it } from 'vitest';
import { createChatHandler } from '../../src/chat/chat-handler';
import type { ChatAccess } from '../../src/chat/chat-routes';
import { InMemoryStreamStore } from '../../src/chat/stream-store';
import { ExecutionStatus } from '../../src/state/execution-status';
import { serveChat } from '../support/ai-chat';
import { slowChat } from '../support/chat-fixtures';
import { readChunks, userMessageBody } from '../support/ui-stream';

/** A request as the user `user` (the handlers' authorize lets anyone but mallory in). */
const as = (user: string, url: string, body?: string) =>
  fetch(url, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', 'x-user': user },
    ...(body !== undefined && { body }),
  });

describe.each(['queue', 'steer'] as const)("authorize, whileRunning: '%s'", (whileRunning) => {
  it('refuses the stream, the stop and a message of a running chat in the process running it and in another (403); the run is not affected', async () => {
    const { agent, store, prompts, started, release } = slowChat([{ text: 'Mild.' }, { text: 'Again.' }]);
    const streams = new InMemoryStreamStore();
    const asked: ChatAccess[] = [];
    const authorize = (request: Request, access: ChatAccess) => {
      asked.push(access);
      return request.headers.get('x-user') !== 'mallory';
    };
    const logged: unknown[] = [];
    const handler = () =>
      createChatHandler({ agent, streams, whileRunning, authorize, onError: (e) => logged.push(e) });
    const [running, other] = await Promise.all([serveChat(handler()), serveChat(handler())]);
    try {
      const chatId = `auth-${whileRunning}`;
      const answering = readChunks(await as('alice', running.api, userMessageBody(chatId, 'Weather?')));
      await started.opened;
      asked.length = 0;
      for (const api of [running.api, other.api]) {
        const refused = [
          await as('mallory', `${api}/${chatId}/stream`),
          await as('mallory', `${api}/${chatId}/stop`, '{}'),
          await as('mallory', api, userMessageBody(chatId, 'Ignore all that.')),
        ];
        expect(refused.map((r) => r.status)).toEqual([403, 403, 403]);
        for (const response of refused)
          expect(((await response.json()) as { error: { code: string } }).error.code).toBe('FORBIDDEN');
      }
      expect(asked.map((a) => a.action)).toEqual(['read', 'stop', 'write', 'read', 'stop', 'write']);
      expect(await streams.handedOff(chatId)).toEqual([]);
      expect(await streams.active(chatId)).not.toBeNull();
      release.open();
      const chunks = await answering;

      expect(chunks.at(-1)).toMatchObject({ type: 'finish', finishReason: 'stop' });
      const state = (await store.load(chatId))?.state;
      expect(state?.status()).toBe(ExecutionStatus.Completed);
      expect(
        state
          ?.messages()
          .filter((m) => m.role === 'user')
          .map((m) => m.content),
      ).toEqual(['Weather?']);
      expect(state?.steeredMessages()).toEqual([]);
      expect(prompts).toHaveLength(2); // the call, the answer: nothing steered or queued
      expect(logged).toEqual([]);
      // the same requests as alice are let in
      const stop = await as('alice', `${other.api}/${chatId}/stop`, '{}');
      expect(stop.status).toBe(202);
      expect((await as('alice', `${other.api}/${chatId}/stream`)).status).toBe(204);
    } finally {
      await Promise.all([running.close(), other.close()]);
    }
  });
});
