/**
 * Issue #44 item 5: a person stops a chat mid-answer (from another handler sharing the stream
 * store, as another process does): what the page saw of the answer is kept as the stopped
 * assistant message, so the live page, a reload and the next turn's model see the same answer.
 */
import { describe, expect, it } from 'vitest';
import { createChatHandler } from '../../src/chat/chat-handler';
import { InMemoryStreamStore } from '../../src/chat/stream-store';
import { abortableDelay } from '../../src/drivers/abortable-delay';
import type { Driver } from '../../src/drivers/driver';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import type { AgentState } from '../../src/state/agent-state';
import { chatClient, serveChat } from '../support/ai-chat';
import { textOf } from '../support/chat-fixtures';
import { until } from '../support/chat-processes';
import { answerText, typingDriver } from '../support/typing-agent';

/** A model that types a 10-word answer word by word and, the first time, holds after word 6 until stopped. */
function typingChat() {
  const prompts: string[][] = [];
  const script = scriptedDriver([
    (state) => ({ text: state.messages().at(-1)?.content === 'Go on' ? 'Done.' : answerText(10) }),
  ]);
  let calls = 0;
  const typing = typingDriver(script, (i, signal) =>
    calls === 1 && i >= 6 ? abortableDelay(2 ** 31 - 1, signal) : undefined,
  );
  const driver: Driver = {
    name: 'recording',
    infer: (state, context) => {
      calls++;
      prompts.push(state.messages().map((m) => `${m.role}: ${m.content}`));
      return typing.infer(state, context);
    },
  };
  const store = new InMemorySessionStore();
  return { agent: createAgent({ driver, store }), store, prompts };
}

const words = (text: string) => text.split(' ').filter(Boolean).length;

describe('a stop mid-answer', () => {
  it('keeps what the page saw as the stopped assistant message: live, reloaded and in the next prompt', async () => {
    const { agent, store, prompts } = typingChat();
    const streams = new InMemoryStreamStore();
    const logged: unknown[] = [];
    const onError = (error: unknown) => logged.push(error);
    const running = await serveChat(createChatHandler({ agent, streams, onError }));
    const other = await serveChat(createChatHandler({ agent, streams, onError }));
    try {
      const { chat, errors } = chatClient(running.api, 'stop-1');
      const sent = chat.sendMessage({ text: 'Tell me a story' });
      await until(() => words(textOf(chat.messages.at(-1))) >= 6);
      const stop = await fetch(`${other.api}/stop-1/stop`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(stop.status).toBe(202);
      await sent;
      const live = textOf(chat.messages.at(-1));
      expect(live).toBe('word0 word1 word2 word3 word4 word5 ');
      expect(chat.messages.at(-1)?.metadata).toMatchObject({ status: 'stopped' });
      // the run's stream ends once the session is saved
      await until(async () => (await streams.active('stop-1')) === null);

      const stopped = (await store.load('stop-1'))?.state as AgentState;
      expect(stopped.stopReason()).toBe('user_requested');
      expect(stopped.messages().at(-1)).toMatchObject({
        role: 'assistant',
        content: live,
        metadata: { stopped_answer: true },
      });
      const reloaded = (await (await fetch(`${other.api}/stop-1/messages`)).json()) as {
        messages: { role: string; parts: unknown[] }[];
      };
      expect(reloaded.messages.map((m) => m.role)).toEqual(['user', 'assistant']);
      expect(textOf(reloaded.messages.at(-1))).toBe(live);
      // the stopped execution replays as recorded, its stopped answer included
      const replayed = await agent.replay(stopped);
      expect(replayed.divergence, JSON.stringify(replayed.divergence)).toBeNull();

      await chat.sendMessage({ text: 'Go on' });
      expect(errors).toEqual([]);
      expect(logged).toEqual([]);
      expect(prompts.at(-1)).toEqual(['user: Tell me a story', `assistant: ${live}`, 'user: Go on']);
      expect(textOf(chat.messages.at(-1))).toBe('Done.');
    } finally {
      await Promise.all([running.close(), other.close()]);
    }
  }, 30_000);
});
