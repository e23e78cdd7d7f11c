import { describe, expect, it } from 'vitest';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { SessionConflictError } from '../../src/persistence/errors';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import { FileSessionStore, SqliteExecutionStore, SqliteSessionStore } from '../../src/persistence/index';
import { ChatTurnConflictError } from '../../src/runtime/chat-turn-conflict-error';
import { createAgent } from '../../src/runtime/create-agent';
import type { AgentState } from '../../src/state/agent-state';
import { InvalidArgumentError } from '../../src/state/errors';

describe('errors that tell the caller what to do', () => {
  it('agent.chat losing a race to another turn of the session names the session and says to retry', async () => {
    const store = new InMemorySessionStore();
    const agent = createAgent({ driver: scriptedDriver([{ text: 'one' }, { text: 'two' }]), store });
    await agent.chat('s-1', 'first');
    const turns = await Promise.allSettled([agent.chat('s-1', 'a'), agent.chat('s-1', 'b')]);

    const lost = turns.filter((t) => t.status === 'rejected');
    expect(lost).toHaveLength(1);
    const error = (lost[0] as PromiseRejectedResult).reason;
    expect(error).toBeInstanceOf(ChatTurnConflictError);
    expect(error).toMatchObject({ code: 'CHAT_TURN_CONFLICT', sessionId: 's-1' });
    expect(error.message).toMatch(/session "s-1"/);
    expect(error.message).toMatch(/Retry the turn/);
    expect(error.cause).toBeInstanceOf(SessionConflictError);
    const stored = await store.load('s-1');
    expect(stored?.state.messages().filter((m) => m.role === 'user')).toHaveLength(2);
  });

  it('agent.chat does not save over a save made after its turn loaded the session (a conflict)', async () => {
    const store = new InMemorySessionStore();
    const agent = createAgent({ driver: scriptedDriver([{ text: 'one' }, { text: 'two' }]), store });
    await agent.chat('s-1', 'first');
    // someone else saves the session right after the turn's one load, before its run starts
    const load = store.load.bind(store);
    store.load = async (id) => {
      const loaded = await load(id);
      store.load = load;
      if (loaded) await store.save(id, loaded.state.withUserMessage('theirs'), loaded.version);
      return loaded;
    };
    const error = await agent.chat('s-1', 'mine').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ChatTurnConflictError);
    const users = (await store.load('s-1'))?.state.messages().filter((m) => m.role === 'user');
    expect(users?.map((m) => m.content)).toEqual(['first', 'theirs']);
  });

  it("execute('text') says to pass an AgentState built from the text", async () => {
    const agent = createAgent({ driver: scriptedDriver([{ text: 'hi' }]) });
    const execute = agent.execute as (state: unknown) => Promise<AgentState>;
    const error = await execute('What is 2 + 3?').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toMatch(/AgentState\.empty\(\)\.withUserMessage/);
    expect((error as Error).message).toMatch(/What is 2 \+ 3\?/);
  });

  it.each([
    ['undefined (an unset environment variable)', undefined],
    ['empty', ''],
    ['a number', 42],
    ['a path with a NUL byte', '/tmp/a\u0000b'],
  ])('a store whose path is %s is refused at construction with InvalidArgumentError', (_label, path) => {
    for (const make of [
      () => new FileSessionStore(path as string),
      () => new SqliteSessionStore(path as string),
      () => new SqliteExecutionStore(path as string),
    ]) {
      expect(make).toThrow(InvalidArgumentError);
    }
  });

  it('an empty SQLite path says to use ":memory:" for a database in memory', () => {
    expect(() => new SqliteSessionStore('')).toThrow(/:memory:/);
  });
});
