/**
 * Issue #44 item 1: a message steered into a chat's run (`whileRunning: 'steer'`) enters the
 * conversation exactly once: answered in the running turn, it is not left in the session's steering
 * section for the next execution to apply again; stopped before it joined, it waits there once.
 * In one process (InMemoryStreamStore) and over Redis (RedisStreamStore).
 */
import type { LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { z } from 'zod';
import { createChatHandler } from '../../src/chat/chat-handler';
import { InMemoryStreamStore, type StreamStore } from '../../src/chat/stream-store';
import { RedisStreamStore } from '../../src/distributed/index';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import type { Agent } from '../../src/runtime/agent-actor';
import { createAgent } from '../../src/runtime/create-agent';
import type { AgentState } from '../../src/state/agent-state';
import { defineTool } from '../../src/tools/define-tool';
import { type RedisServer, startRedisServer } from '../distributed/support/redis-server';
import { chatClient, serveChat } from '../support/ai-chat';
import { gate } from '../support/chat-fixtures';

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: 2, text: 2, reasoning: undefined },
};
const finish = (unified: 'stop' | 'tool-calls') => ({ unified, raw: unified });

/**
 * A chat on a model (through the model driver, as a user's is): its first call looks Lisbon and
 * Porto up (the tool waits for `release`), every later one answers the last user message of its prompt;
 * `prompts` keeps each prompt's messages as `role: text`. `steered` opens once the run's actor has
 * been sent a `steer` (the message reached the run, however the stream store carries it).
 */
function slowChat() {
  const started = gate();
  const release = gate();
  const steered = gate();
  const prompts: string[][] = [];
  const lookup = defineTool({
    description: 'Look a city up',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      started.open();
      await release.opened;
      return { city, celsius: 22 };
    },
  });
  const model = new MockLanguageModelV4({
    doGenerate: async ({ prompt }): Promise<LanguageModelV4GenerateResult> => {
      const lines = prompt.map((m) => `${m.role}: ${textOfPrompt(m.content)}`);
      prompts.push(lines);
      if (prompts.length === 1)
        return {
          content: [
            { type: 'tool-call', toolCallId: 'c1', toolName: 'lookup', input: '{"city":"Lisbon"}' },
            { type: 'tool-call', toolCallId: 'c2', toolName: 'lookup', input: '{"city":"Porto"}' },
          ],
          finishReason: finish('tool-calls'),
          usage,
          warnings: [],
        };
      const asked = lines
        .filter((l) => l.startsWith('user: '))
        .at(-1)
        ?.slice(6);
      return {
        content: [{ type: 'text', text: `Answered: ${asked}` }],
        finishReason: finish('stop'),
        usage,
        warnings: [],
      };
    },
  });
  const store = new InMemorySessionStore();
  const base = createAgent({ model, tools: { lookup }, store });
  // the test's inspector sees the run's actor receive the steer (the chat handler inspects nothing)
  const agent: Agent = {
    ...base,
    execute: (state, options) =>
      base.execute(state, {
        ...options,
        inspect: (event: InspectionEvent) => {
          if (event.type === '@xstate.event' && event.event.type === 'steer') steered.open();
        },
      }),
  };
  return { agent, store, prompts, started, release, steered };
}

function textOfPrompt(content: unknown): string {
  if (typeof content === 'string') return content;
  return (content as { type: string; text?: string }[])
    .map((part) => (part.type === 'text' ? part.text : part.type))
    .join('');
}

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedisServer();
}, 30_000);
afterAll(async () => {
  await redis?.stop();
});

const stores: ReadonlyArray<[string, () => StreamStore]> = [
  ['in one process', () => new InMemoryStreamStore()],
  [
    'over Redis',
    () => new RedisStreamStore({ connection: redis.connection, prefix: `steer-once-${Math.random()}:` }),
  ],
];

const count = (lines: readonly string[] | undefined, line: string) =>
  (lines ?? []).filter((l) => l === line).length;

describe.each(stores)('a steered chat message enters the conversation once (%s)', (_, makeStreams) => {
  it('answered in the running turn, it is not asked again in the next one', async () => {
    const { agent, store, prompts, started, release, steered } = slowChat();
    const streams = makeStreams();
    const logged: unknown[] = [];
    const server = await serveChat(
      createChatHandler({ agent, streams, whileRunning: 'steer', onError: (e) => logged.push(e) }),
    );
    try {
      const { chat, errors } = chatClient(server.api, 'once-1');
      const first = chat.sendMessage({ text: 'Weather in Lisbon?' });
      await started.opened;
      const second = chat.sendMessage({ text: 'Send 50 EUR to Bob' });
      // the steering POST answers the run's stream, which ends once the run's state is saved
      await steered.opened;
      release.open();
      await Promise.all([first, second]);
      expect(prompts[1]?.at(-1)).toBe('user: Send 50 EUR to Bob');
      expect((await store.load('once-1'))?.state.steeredMessages()).toEqual([]);

      await chat.sendMessage({ text: 'Thanks' });
      expect(errors).toEqual([]);
      expect(logged).toEqual([]);
      expect(prompts).toHaveLength(3);
      expect(prompts[2]?.at(-1)).toBe('user: Thanks');
      expect(count(prompts[2], 'user: Send 50 EUR to Bob'), JSON.stringify(prompts[2])).toBe(1);
      const stored = (await store.load('once-1'))?.state;
      expect(stored?.steeredMessages()).toEqual([]);
      expect(stored?.messages().filter((m) => m.content === 'Send 50 EUR to Bob')).toHaveLength(1);
      // replayed with the unchanged agent, the session's executions are what was recorded
      const replayed = await agent.replay(stored as AgentState);
      expect(replayed.divergence, JSON.stringify(replayed.divergence)).toBeNull();
    } finally {
      await server.close();
      await streams.close();
    }
  }, 30_000);

  it('stopped before it joined, it is kept once for the next execution', async () => {
    const { agent, store, prompts, started, release, steered } = slowChat();
    const streams = makeStreams();
    const logged: unknown[] = [];
    const server = await serveChat(
      createChatHandler({ agent, streams, whileRunning: 'steer', onError: (e) => logged.push(e) }),
    );
    try {
      const { chat, errors } = chatClient(server.api, 'once-2');
      const first = chat.sendMessage({ text: 'Weather in Lisbon?' });
      await started.opened;
      const second = chat.sendMessage({ text: 'Send 50 EUR to Bob' });
      await steered.opened;
      const stop = await fetch(`${server.api}/once-2/stop`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(stop.status).toBe(202);
      release.open();
      await Promise.all([first, second]);
      const stopped = (await store.load('once-2'))?.state;
      expect(stopped?.stopReason()).toBe('user_requested');
      expect(stopped?.steeredMessages().map((m) => m.content)).toEqual(['Send 50 EUR to Bob']);

      await chat.sendMessage({ text: 'Thanks' });
      expect(errors).toEqual([]);
      expect(logged).toEqual([]);
      const last = prompts.at(-1);
      expect(last?.slice(-2)).toEqual(['user: Send 50 EUR to Bob', 'user: Thanks']);
      expect(count(last, 'user: Send 50 EUR to Bob'), JSON.stringify(last)).toBe(1);
      const stored = (await store.load('once-2'))?.state;
      expect(stored?.steeredMessages()).toEqual([]);
      expect(stored?.messages().filter((m) => m.content === 'Send 50 EUR to Bob')).toHaveLength(1);
      // replayed with the unchanged agent, the session's executions are what was recorded
      const replayed = await agent.replay(stored as AgentState);
      expect(replayed.divergence, JSON.stringify(replayed.divergence)).toBeNull();
    } finally {
      await server.close();
      await streams.close();
    }
  }, 30_000);
});
