/**
 * A subagent call ended from outside (the approval timeout, a person's stop) while the call inside
 * the subagent waited for a decision keeps the subagent's waiting run on the ended call, so that
 * the recorded run replays (#36); the caller's usage does not count the child's.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { UnreplayableRunError } from '../../src/replay/unreplayable-run';
import type { AgentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { defineTool } from '../../src/tools/define-tool';

const definition = (): AgentDefinition => ({
  driver: scriptedDriver([
    {
      toolCalls: [{ id: 'p1', name: 'payer', args: { task: 'pay Bob 40' } }],
      usage: { inputTokens: 10, outputTokens: 5, totalTokens: 15 },
    },
    { text: 'late' },
  ]),
  budget: new ExecutionBudget({ maxSeconds: 60 }),
  subagents: {
    agents: {
      payer: {
        description: 'Pays',
        driver: scriptedDriver([
          {
            toolCalls: [{ id: 't1', name: 'transfer', args: { to: 'bob', amount: 40 } }],
            usage: { inputTokens: 100, outputTokens: 50, totalTokens: 150 },
          },
          { text: 'paid' },
        ]),
        tools: {
          transfer: defineTool({
            description: 'Transfer money',
            inputSchema: z.object({ to: z.string(), amount: z.number() }),
            needsApproval: true,
            execute: async ({ amount }) => `sent ${amount}`,
          }),
        },
      },
    },
  },
});

afterEach(() => {
  vi.useRealTimers();
});

const ask = () => AgentState.empty().withUserMessage('Pay Bob 40');
const copy = (state: AgentState) => AgentState.fromJSON(JSON.parse(JSON.stringify(state)));

describe('replaying a subagent call ended while its subagent waited', () => {
  it('keeps the waiting child on the call the approval timeout ended, and replays with no divergence', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const actor = createAgent(definition()).createActor(ask());
    actor.start();
    actor.send({ type: 'execute' });
    await vi.waitFor(() => expect(JSON.stringify(actor.getSnapshot().value)).toContain('"waiting"'));
    await vi.advanceTimersByTimeAsync(61_000);
    expect(actor.getSnapshot().value).toBe('stopped');
    const recorded = copy(actor.getSnapshot().context.state);
    actor.stop();
    vi.useRealTimers();

    const call = recorded.steps()[0]?.toolExecutions()[0];
    expect(call?.error()?.code).toBe('APPROVAL_TIMEOUT');
    // the child as it waited: its first step asked for the transfer, which never ran
    const child = call?.childState();
    expect(child?.pendingApprovals().map((p) => p.toolCallId)).toEqual(['t1']);
    expect(child?.usage().totalTokens).toBe(150);
    // the child's 150 tokens are not counted for the caller (they were not before either)
    expect(call?.usage().totalTokens).toBe(0);
    expect(recorded.usage().totalTokens).toBe(15);

    const { state, divergence } = await createAgent(definition()).replay(recorded);
    expect(divergence).toBeNull();
    const replayedChild = state.steps()[0]?.toolExecutions()[0]?.childState();
    expect(replayedChild?.pendingApprovals().map((p) => p.toolCallId)).toEqual(['t1']);
    expect(state.usage()).toEqual(recorded.usage());
  });

  it('refuses a kept child holding a decision taken after the deadline (never carried out)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const agent = createAgent(definition());
    const waiting = await agent.execute(ask());
    vi.setSystemTime(Date.now() + 120_000);
    const recorded = copy(await agent.decide(waiting, [{ toolCallId: 't1', type: 'approve' }]));
    vi.useRealTimers();

    expect(recorded.steps()[0]?.toolExecutions()[0]?.childState()).not.toBeNull();
    const refusal = await createAgent(definition())
      .replay(recorded)
      .catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(UnreplayableRunError);
    expect(refusal).toMatchObject({
      code: 'REPLAY_UNREPLAYABLE',
      reason: 'subagent-decision-not-carried-out',
      stepNumber: 1,
    });
  });
});
