/**
 * Issue #35: messages handed to a chat's run (queued, steered) are kept in the stream store until
 * the session holds them. The run that claims the chat after one whose process died takes those
 * the session lacks first, in order, and only settles those it holds (saved before the death).
 * The dead run is a stream begun and never ended; its lease runs out on a fake clock.
 */
import { describe, expect, it } from 'vitest';
import { createChatHandler } from '../../src/chat/chat-handler';
import { keepLateSteering } from '../../src/chat/chat-handoff';
import { handedOffMessage } from '../../src/chat/chat-message-id';
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

describe('a message steered as a run concluded', () => {
  it("is kept once when the chat's next run adopted it into the session first", async () => {
    // The run's stream ended; the message steered to it as it ended is still in the stream store's
    // hand-off list, so the run that claimed the chat next adopted it (saved to the steering
    // section) before the concluding run saved it in turn.
    const store = new InMemorySessionStore();
    const late = handedOffMessage('Also this?', { queued: false });
    const adopted = AgentState.empty()
      .withUserMessage('Hi')
      .withSteeredMessages([Message.of(late)]);
    const version = await store.save('c1', adopted, null);
    const kept = await keepLateSteering(store, 'c1', [late]);
    const stored = await store.load('c1');
    expect(stored?.state.steeredMessages().map((m) => m.content)).toEqual(['Also this?']);
    // nothing to add: nothing saved, the session as it is
    expect(stored?.version).toBe(version);
    expect(kept?.version).toBe(version);
  });
});
