import { describe, expect, it } from 'vitest';
import {
  type AgentState,
  ChatTurnConflictError,
  createAgent,
  InMemorySessionStore,
  InvalidArgumentError,
  SessionConflictError,
  scriptedDriver,
} from '../../src/index';

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

  it("execute('text') says to pass an AgentState built from the text", async () => {
    const agent = createAgent({ driver: scriptedDriver([{ text: 'hi' }]) });
    const execute = agent.execute as (state: unknown) => Promise<AgentState>;
    const error = await execute('What is 2 + 3?').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(InvalidArgumentError);
    expect((error as Error).message).toMatch(/AgentState\.empty\(\)\.withUserMessage/);
    expect((error as Error).message).toMatch(/What is 2 \+ 3\?/);
  });
});
