/**
 * Issue #48 items 2 and 3: a chat turn starts one way wherever it starts (startChatTurn): the
 * session is loaded once per turn, messages steered in as the last run concluded come before the
 * turn's message (agent.chat() too), and the chat steers its run through a handle the run's start
 * gives it, not by inspecting the run.
 */
import { describe, expect, it, vi } from 'vitest';
import { createChatHandler } from '../../src/chat/chat-handler';
import { InMemoryStreamStore } from '../../src/chat/stream-store';
import type { Driver } from '../../src/drivers/driver';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import type { CreateActorOptions } from '../../src/runtime/agent-actor';
import { createAgent } from '../../src/runtime/create-agent';
import type { InternalActorOptions } from '../../src/runtime/run-to-outcome';
import { AgentState } from '../../src/state/agent-state';
import { Message } from '../../src/state/message';
import { serveChat } from '../support/ai-chat';
import { slowChat } from '../support/chat-fixtures';
import { postJson, readChunks, userMessageBody } from '../support/ui-stream';

/** An InMemorySessionStore that counts its loads. */
class CountingStore extends InMemorySessionStore {
  loads = 0;
  override async load(sessionId: string) {
    this.loads++;
    return super.load(sessionId);
  }
}

/** An agent on `store` whose model answers each prompt, and keeps the prompts as `role: text` lines. */
function recordingAgent(store: InMemorySessionStore) {
  const prompts: string[][] = [];
  const script = scriptedDriver([{ text: 'One.' }, { text: 'Two.' }, { text: 'Three.' }]);
  const driver: Driver = {
    name: 'recording',
    infer: (state, context) => {
      prompts.push(state.messages().map((m) => `${m.role}: ${m.content}`));
      return script.infer(state, context);
    },
  };
  return { agent: createAgent({ driver, store }), prompts };
}

/** A completed session `id` whose steering section holds 'Late?' (steered in as its run concluded). */
async function withLateSteering(store: InMemorySessionStore, id: string) {
  const done = await createAgent({ driver: scriptedDriver([{ text: 'Hello.' }]) }).execute(
    AgentState.empty().withUserMessage('Hi'),
  );
  await store.save(id, done.withSteeredMessages([Message.user('Late?')]), null);
}

describe('a chat turn', () => {
  it('agent.chat() applies the messages steered in as the last run concluded before its message', async () => {
    const store = new InMemorySessionStore();
    const { agent, prompts } = recordingAgent(store);
    await withLateSteering(store, 's1');

    await agent.chat('s1', 'Next?');

    expect(prompts[0]?.slice(-2)).toEqual(['user: Late?', 'user: Next?']);
    expect((await store.load('s1'))?.state.steeredMessages()).toEqual([]);
  });

  it('the chat handler applies them first too', async () => {
    const store = new InMemorySessionStore();
    const { agent, prompts } = recordingAgent(store);
    await withLateSteering(store, 's2');
    const server = await serveChat(createChatHandler({ agent }));
    try {
      await readChunks(await postJson(server.api, userMessageBody('s2', 'Next?')));
      expect(prompts[0]?.slice(-2)).toEqual(['user: Late?', 'user: Next?']);
    } finally {
      await server.close();
    }
  });

  it('agent.chat() loads the session once per turn', async () => {
    const store = new CountingStore();
    const { agent } = recordingAgent(store);
    await agent.chat('s3', 'Hi');
    expect(store.loads).toBe(1);
    store.loads = 0;
    await agent.chat('s3', 'Again');
    expect(store.loads).toBe(1);
  });

  it("the chat handler's POST loads the session once per turn", async () => {
    const store = new CountingStore();
    const { agent } = recordingAgent(store);
    const server = await serveChat(createChatHandler({ agent }));
    try {
      for (const text of ['Hi', 'Again']) {
        store.loads = 0;
        const chunks = await readChunks(await postJson(server.api, userMessageBody('s4', text)));
        expect(chunks.at(-1)?.type).toBe('finish');
        expect(store.loads, text).toBe(1);
      }
    } finally {
      await server.close();
    }
  });

  it('a POST that takes the messages an earlier run left (its process died) loads the session once too', async () => {
    let now = 1_000_000;
    const streams = new InMemoryStreamStore({ leaseMs: 1000 }, () => now);
    const store = new CountingStore();
    const { agent, prompts } = recordingAgent(store);
    await store.save('s6', AgentState.empty().withUserMessage('Hi'), null);
    expect(await streams.begin('s6', 'dead')).toBe(true);
    const left = Message.of({ role: 'user', content: 'Left?', metadata: { steerId: 'm1' } });
    expect(await streams.steer('s6', left)).toBe(true);
    now += 1001; // the dead run's lease runs out
    const server = await serveChat(createChatHandler({ agent, streams }));
    try {
      store.loads = 0;
      await readChunks(await postJson(server.api, userMessageBody('s6', 'Next?')));
      expect(prompts[0]).toEqual(['user: Hi', 'user: Left?', 'user: Next?']);
      expect(store.loads).toBe(1);
    } finally {
      await server.close();
    }
  });

  it('the handler steers its run through the handle the run gives it: the run is neither inspected nor observed', async () => {
    const { agent, prompts, started, release } = slowChat([{ text: 'Done.' }]);
    const made = vi.spyOn(agent, 'createActor');
    const streams = new InMemoryStreamStore();
    const server = await serveChat(createChatHandler({ agent, streams, whileRunning: 'steer' }));
    try {
      const first = postJson(server.api, userMessageBody('s5', 'Weather in Lisbon?'));
      await started.opened;
      const steering = await postJson(server.api, userMessageBody('s5', 'In Celsius, please.'));
      release.open();
      await Promise.all([readChunks(await first), readChunks(steering)]);

      // the steered message reached the run: the step after the tool call saw it
      expect(prompts[1]?.at(-1)).toBe('user: In Celsius, please.');
      expect(made).toHaveBeenCalled();
      for (const [, options] of made.mock.calls) {
        const given = options as CreateActorOptions & InternalActorOptions;
        expect(given.inspect).toBeUndefined();
        expect(given.observed).toBe(false);
        expect(given.runHandle).toBeDefined();
      }
    } finally {
      await server.close();
    }
  });
});
