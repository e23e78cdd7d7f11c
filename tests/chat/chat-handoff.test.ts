/**
 * Issue #35: messages handed to a chat's run (queued, steered) are kept in the stream store until
 * the session holds them. The run that claims the chat after one whose process died takes those
 * the session lacks first, in order, and only settles those it holds (saved before the death).
 * The dead run is a stream begun and never ended; its lease runs out on a fake clock.
 */
import { describe, expect, it } from 'vitest';
import { createChatHandler } from '../../src/chat/chat-handler';
import { InMemoryStreamStore } from '../../src/chat/stream-store';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { Message } from '../../src/state/message';
import { serveChat } from '../support/ai-chat';
import { postJson, readChunks, userMessageBody } from '../support/ui-stream';

const queued = (content: string, queueId: string) =>
  Message.of({ role: 'user', content, metadata: { queueId } });

describe('messages handed to a run whose process died', () => {
  it('the next run takes those the session lacks first, in order, and never one twice', async () => {
    let now = 1_000_000;
    const streams = new InMemoryStreamStore({ leaseMs: 1000 }, () => now);
    const store = new InMemorySessionStore();
    const prompts: string[][] = [];
    const script = scriptedDriver([{ text: 'All three, then.' }, { text: 'Bye.' }]);
    const agent = createAgent({
      store,
      driver: {
        name: 'recording',
        infer: (state, context) => {
          prompts.push(state.messages().map((m) => `${m.role}: ${m.content}`));
          return script.infer(state, context);
        },
      },
    });
    const logged: unknown[] = [];
    const server = await serveChat(
      createChatHandler({ agent, streams, whileRunning: 'queue', onError: (e) => logged.push(e) }),
    );
    try {
      // A run goes on in a process that dies: two messages are handed to it; it had saved the first.
      await store.save('c1', AgentState.empty().withUserMessage('Hi'), null);
      expect(await streams.begin('c1', 'dead')).toBe(true);
      expect(await streams.steer('c1', queued('First?', 'q1'))).toBe(true);
      expect(await streams.steer('c1', queued('Second?', 'q2'))).toBe(true);
      const saved = await store.load('c1');
      await store.save(
        'c1',
        saved?.state.withSteeredMessages([queued('First?', 'q1')]) ?? AgentState.empty(),
        1,
      );
      now += 1001; // its lease runs out

      await readChunks(await postJson(server.api, userMessageBody('c1', 'Third?')));
      expect(prompts).toEqual([['user: Hi', 'user: First?', 'user: Second?', 'user: Third?']]);
      expect(await streams.handedOff('c1')).toEqual([]);
      await readChunks(await postJson(server.api, userMessageBody('c1', 'Thanks.')));
      const users = (await store.load('c1'))?.state
        .messages()
        .filter((m) => m.role === 'user')
        .map((m) => m.content);
      expect(users).toEqual(['Hi', 'First?', 'Second?', 'Third?', 'Thanks.']);
      expect(logged).toEqual([]);
    } finally {
      await server.close();
    }
  });
});
