/**
 * Issue #35: `createChatHandler({ whileRunning: 'queue' })`: a message sent while the chat answers
 * is answered by the next execution as soon as the running one ends, by the process running the
 * chat and on the same stream; the POST that queued it answers with that answer.
 */
import { describe, expect, it } from 'vitest';
import { createChatHandler } from '../../src/chat/chat-handler';
import { InMemoryStreamStore } from '../../src/chat/stream-store';
import type { ScriptEntry } from '../../src/drivers/scripted-driver';
import { ExecutionStatus } from '../../src/state/execution-status';
import { chatClient, serveChat } from '../support/ai-chat';
import { slowChat as slowChatOf, textOf } from '../support/chat-fixtures';
import { postJson, readChunks, userMessageBody } from '../support/ui-stream';

/** The model answers the last user message, for each execution. */
const answerLastUser: ScriptEntry = (state) => ({
  text: `Answered: ${
    state
      .messages()
      .filter((m) => m.role === 'user')
      .at(-1)?.content
  }`,
});
const slowChat = () => slowChatOf([answerLastUser, answerLastUser, answerLastUser]);

/** An InMemoryStreamStore that counts the streams begun per chat. */
class CountingStreams extends InMemoryStreamStore {
  readonly begun: string[] = [];
  override async begin(chatId: string, streamId: string): Promise<boolean> {
    const began = await super.begin(chatId, streamId);
    if (began) this.begun.push(chatId);
    return began;
  }
}

describe("whileRunning: 'queue'", () => {
  it("the AI SDK's chat client sends a second message mid-run: the next execution answers it after the first, on the same stream", async () => {
    const { agent, store, prompts, started, release } = slowChat();
    const streams = new CountingStreams();
    const logged: unknown[] = [];
    const server = await serveChat(
      createChatHandler({ agent, streams, whileRunning: 'queue', onError: (e) => logged.push(e) }),
    );
    try {
      const { chat, errors, responded } = chatClient(server.api, 'queue-1');
      const answering = responded('POST');
      const first = chat.sendMessage({ text: 'Weather in Lisbon?' });
      expect(await answering).toBe(200);
      await started.opened;
      const queued = responded('POST');
      const second = chat.sendMessage({ text: 'And in Celsius?' });
      expect(await queued).toBe(200);
      release.open();
      await Promise.all([first, second]);

      expect(errors).toEqual([]);
      expect(logged).toEqual([]);
      // the first execution answered without the queued message; the next one answered it
      expect(prompts, JSON.stringify(prompts)).toHaveLength(3);
      expect(prompts[1]?.some((line) => line.includes('Celsius'))).toBe(false);
      expect(prompts[2]?.at(-1)).toBe('user: And in Celsius?');
      const stored = (await store.load('queue-1'))?.state;
      expect(stored?.executionCount()).toBe(2);
      expect(stored?.finalResponse()).toBe('Answered: And in Celsius?');
      expect(streams.begun).toEqual(['queue-1']);
      const assistant = chat.messages.filter((m) => m.role === 'assistant').map(textOf);
      expect(assistant.at(-1)).toBe('Answered: And in Celsius?');
      expect(assistant).toContain('Answered: Weather in Lisbon?');
      expect(chat.messages.filter((m) => m.role === 'user').map(textOf)).toEqual([
        'Weather in Lisbon?',
        'And in Celsius?',
      ]);
    } finally {
      await server.close();
    }
  });

  it('a queued message survives in the session when the running process stops the run, and comes first next time', async () => {
    const { agent, store, prompts, started, release } = slowChat();
    const logged: unknown[] = [];
    const server = await serveChat(
      createChatHandler({ agent, whileRunning: 'queue', onError: (e) => logged.push(e) }),
    );
    try {
      const first = await postJson(server.api, userMessageBody('queue-2', 'Weather in Lisbon?'));
      const firstChunks = readChunks(first);
      await started.opened;
      const queueing = await postJson(server.api, userMessageBody('queue-2', 'And in Celsius?'));
      expect(queueing.status).toBe(200);
      const queuedChunks = readChunks(queueing);
      const stop = await postJson(`${server.api}/queue-2/stop`, '{}');
      expect(stop.status).toBe(202);
      release.open();
      await firstChunks;
      // the stream ended without answering it: the POST that queued it gets nothing
      expect(await queuedChunks).toEqual([]);
      while (((await store.load('queue-2'))?.state.steeredMessages().length ?? 0) === 0)
        await new Promise((resolve) => setTimeout(resolve, 5));
      const kept = (await store.load('queue-2'))?.state;
      expect(kept?.status()).toBe(ExecutionStatus.Stopped);
      expect(kept?.steeredMessages().map((m) => m.content)).toEqual(['And in Celsius?']);

      await readChunks(await postJson(server.api, userMessageBody('queue-2', 'Anything else?')));
      expect(logged).toEqual([]);
      expect(prompts.at(-1)?.slice(-2)).toEqual(['user: And in Celsius?', 'user: Anything else?']);
    } finally {
      await server.close();
    }
  });

  it('a message queued through another handler sharing the stream store is answered by the process running the chat', async () => {
    const { agent, store, prompts, started, release } = slowChat();
    const streams = new CountingStreams();
    const running = await serveChat(createChatHandler({ agent, streams, whileRunning: 'queue' }));
    const other = await serveChat(createChatHandler({ agent, streams, whileRunning: 'queue' }));
    try {
      const first = chatClient(running.api, 'queue-3');
      const answered = first.responded('POST');
      const answering = first.chat.sendMessage({ text: 'Weather in Lisbon?' });
      await answered;
      await started.opened;
      const second = chatClient(other.api, 'queue-3');
      const queueing = second.chat.sendMessage({ text: 'And in Celsius?' });
      expect(await second.responded('POST')).toBe(200);
      release.open();
      await Promise.all([answering, queueing]);

      expect(first.errors).toEqual([]);
      expect(second.errors).toEqual([]);
      expect(prompts).toHaveLength(3);
      expect(prompts[2]?.at(-1)).toBe('user: And in Celsius?');
      expect(streams.begun).toEqual(['queue-3']);
      expect((await store.load('queue-3'))?.state.finalResponse()).toBe('Answered: And in Celsius?');
      // the POST that queued it answered with the next execution's answer only
      const assistant = second.chat.messages.filter((m) => m.role === 'assistant');
      expect(assistant.map(textOf)).toEqual(['Answered: And in Celsius?']);
      const firstAnswer = first.chat.messages.filter((m) => m.role === 'assistant').map(textOf);
      expect(firstAnswer).toEqual(['Answered: Weather in Lisbon?']);
    } finally {
      await Promise.all([running.close(), other.close()]);
    }
  });
});
