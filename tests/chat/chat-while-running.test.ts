/**
 * Issue #35: `createChatHandler({ whileRunning: 'steer' })`: a message sent while the chat answers
 * joins the running execution (the model sees it at its next step) instead of a 409, in whichever
 * handler sharing the stream store gets it; the POST that steers answers the run's stream.
 */
import { describe, expect, it } from 'vitest';
import { createChatHandler } from '../../src/chat/chat-handler';
import { InMemoryStreamStore } from '../../src/chat/stream-store';
import type { Driver } from '../../src/drivers/driver';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import type { SessionStore } from '../../src/persistence/session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { ExecutionStatus } from '../../src/state/execution-status';
import { chatClient, serveChat } from '../support/ai-chat';
import { gate, slowChat as slowChatOf, textOf } from '../support/chat-fixtures';
import { postJson, readChunks, userMessageBody } from '../support/ui-stream';

/** The model answers the last message of its prompt. */
const slowChat = () => slowChatOf([(state) => ({ text: `Answered: ${state.messages().at(-1)?.content}` })]);

describe("whileRunning: 'steer'", () => {
  it("the AI SDK's chat client sends a second message mid-run: the model sees it at the next step, the client gets the answer", async () => {
    const { agent, store, prompts, started, release } = slowChat();
    const logged: unknown[] = [];
    const server = await serveChat(
      createChatHandler({ agent, whileRunning: 'steer', onError: (e) => logged.push(e) }),
    );
    try {
      const { chat, errors, responded } = chatClient(server.api, 'steer-1');
      const answering = responded('POST');
      const first = chat.sendMessage({ text: 'Weather in Lisbon?' });
      expect(await answering).toBe(200);
      await started.opened;
      const steered = responded('POST');
      const second = chat.sendMessage({ text: 'And in Celsius?' });
      // the handler hands the message to the run before it answers: the tool is still in flight
      expect(await steered).toBe(200);
      release.open();
      await Promise.all([first, second]);

      expect(errors).toEqual([]);
      expect(logged).toEqual([]);
      expect(prompts, JSON.stringify(prompts)).toHaveLength(2);
      expect(prompts[1]?.at(-1)).toBe('user: And in Celsius?');
      const stored = (await store.load('steer-1'))?.state;
      expect(stored?.stepCount()).toBe(2);
      expect(stored?.executionCount()).toBe(1);
      expect(stored?.finalResponse()).toBe('Answered: And in Celsius?');
      // the client's assistant message holds the whole run, the steered step's answer included
      const assistant = chat.messages.filter((m) => m.role === 'assistant');
      expect(assistant).toHaveLength(1);
      expect(textOf(assistant[0])).toBe('Answered: And in Celsius?');
      expect(chat.messages.filter((m) => m.role === 'user').map(textOf)).toEqual([
        'Weather in Lisbon?',
        'And in Celsius?',
      ]);
    } finally {
      await server.close();
    }
  });

  it('a message to another handler sharing the stream store reaches the run in the first', async () => {
    const { agent, store, prompts, started, release } = slowChat();
    const streams = new InMemoryStreamStore();
    const running = await serveChat(createChatHandler({ agent, streams, whileRunning: 'steer' }));
    const other = await serveChat(createChatHandler({ agent, streams, whileRunning: 'steer' }));
    try {
      const first = chatClient(running.api, 'steer-2');
      const answered = first.responded('POST');
      const answering = first.chat.sendMessage({ text: 'Weather in Lisbon?' });
      await answered;
      await started.opened;
      const second = chatClient(other.api, 'steer-2');
      const steering = second.chat.sendMessage({ text: 'And in Celsius?' });
      expect(await second.responded('POST')).toBe(200);
      release.open();
      await Promise.all([answering, steering]);

      expect(first.errors).toEqual([]);
      expect(second.errors).toEqual([]);
      expect(prompts[1]?.at(-1)).toBe('user: And in Celsius?');
      expect((await store.load('steer-2'))?.state.finalResponse()).toBe('Answered: And in Celsius?');
      // the POST that steered answered the run's stream from its start: the same final message
      const last = (c: typeof first) => c.chat.messages.filter((m) => m.role === 'assistant').at(-1);
      expect(textOf(last(second))).toBe('Answered: And in Celsius?');
      expect(last(second)?.parts).toEqual(last(first)?.parts);
    } finally {
      await Promise.all([running.close(), other.close()]);
    }
  });

  it('a message steered as the run concludes (its final save under way) is kept for the next execution', async () => {
    const prompts: string[][] = [];
    const script = scriptedDriver([(state) => ({ text: `Answered: ${state.messages().at(-1)?.content}` })]);
    const driver: Driver = {
      name: 'recording',
      infer: (state, context) => {
        prompts.push(state.messages().map((m) => `${m.role}: ${m.content}`));
        return script.infer(state, context);
      },
    };
    // the final save of the first run waits until the test lets it go
    const inner = new InMemorySessionStore();
    const finalSave = gate();
    const release = gate();
    let held = false;
    const store: SessionStore = {
      load: (id) => inner.load(id),
      save: async (id, state, version) => {
        if (!held && state.status() === ExecutionStatus.Completed) {
          held = true;
          finalSave.open();
          await release.opened;
        }
        return inner.save(id, state, version);
      },
      delete: (id) => inner.delete(id),
      list: () => inner.list(),
      close: () => inner.close(),
    };
    const logged: unknown[] = [];
    const server = await serveChat(
      createChatHandler({
        agent: createAgent({ driver, store }),
        whileRunning: 'steer',
        onError: (e) => logged.push(e),
      }),
    );
    try {
      const first = await postJson(server.api, userMessageBody('late-1', 'Hello?'));
      const firstChunks = readChunks(first);
      await finalSave.opened;
      const steering = await postJson(server.api, userMessageBody('late-1', 'One more thing'));
      expect(steering.status).toBe(200);
      const relayed = readChunks(steering);
      release.open();
      await Promise.all([firstChunks, relayed]);
      while (((await inner.load('late-1'))?.state.steeredMessages().length ?? 0) === 0)
        await new Promise((resolve) => setTimeout(resolve, 5));

      const next = await postJson(server.api, userMessageBody('late-1', 'And?'));
      await readChunks(next);
      expect(logged).toEqual([]);
      expect(prompts).toHaveLength(2);
      expect(prompts[1]?.slice(-2)).toEqual(['user: One more thing', 'user: And?']);
      const stored = (await inner.load('late-1'))?.state;
      expect(stored?.steeredMessages()).toEqual([]);
      expect(stored?.finalResponse()).toBe('Answered: And?');
    } finally {
      await server.close();
    }
  });

  it('an unknown whileRunning is refused when the handler is made', async () => {
    const { agent } = slowChat();
    expect(() => createChatHandler({ agent, whileRunning: 'later' as never })).toThrow(/whileRunning/);
  });
});
