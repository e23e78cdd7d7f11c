import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { Driver } from '../../src/drivers/driver';
import { type ScriptEntry, scriptedDriver } from '../../src/drivers/scripted-driver';
import type { SubagentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import type { ApprovalInput } from '../../src/state/approval';
import { ApprovalError } from '../../src/state/approval-error';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { ExecutionStatus } from '../../src/state/execution-status';
import type { AgentEvent } from '../../src/state/loop-events';
import { StopReason } from '../../src/state/stop-reason';
import { defineTool } from '../../src/tools/define-tool';

/** A scripted driver that counts its model calls. */
function counted(script: readonly ScriptEntry[]) {
  const inner = scriptedDriver(script);
  const counter = { calls: 0 };
  const driver: Driver = {
    name: 'counted',
    infer: (state, context) => {
      counter.calls++;
      return inner.infer(state, context);
    },
  };
  return { driver, counter };
}

function bank() {
  const transfers: unknown[] = [];
  const transfer = defineTool({
    description: 'Transfer money',
    inputSchema: z.object({ to: z.string(), amount: z.number().positive() }),
    needsApproval: true,
    execute: async (input) => {
      transfers.push(input);
      return `sent ${input.amount} to ${input.to}`;
    },
  });
  const lookups: unknown[] = [];
  const balance = defineTool({
    description: 'Read the balance',
    inputSchema: z.object({}),
    execute: async () => {
      lookups.push(1);
      return 100;
    },
  });
  return { transfer, balance, transfers, lookups };
}

const task = (name: string, id: string) => ({ name, args: { task: `${name} task` }, id });
const transferCall = (amount = 40, id = 't1') => ({ name: 'transfer', args: { to: 'bob', amount }, id });
const ask = () => AgentState.empty().withUserMessage('Pay Bob 40');

/** root -> payer (asks to transfer); the root also reads the balance in the same step. */
function twoLevels() {
  const { transfer, balance, transfers, lookups } = bank();
  const payer = counted([{ toolCalls: [transferCall()] }, { text: 'payer done' }]);
  const root = counted([
    { toolCalls: [{ name: 'balance', args: {}, id: 'b1' }, task('payer', 'p1')] },
    { text: 'all done' },
  ]);
  const payerDefinition: SubagentDefinition = {
    description: 'Pays people',
    driver: payer.driver,
    tools: { transfer },
  };
  const agent = createAgent({
    driver: root.driver,
    tools: { balance },
    subagents: { agents: { payer: payerDefinition } },
  });
  return { agent, transfers, lookups, payer: payer.counter, root: root.counter };
}

describe('approvals inside subagents', () => {
  it('a child waiting for approval makes the root wait; the pending call names the path to it', async () => {
    const { agent, transfers, lookups } = twoLevels();
    const waiting = await agent.execute(ask());
    expect(waiting.status()).toBe(ExecutionStatus.InProgress);
    expect(waiting.pendingApprovals()).toEqual([
      {
        toolCallId: 't1',
        toolName: 'transfer',
        args: { to: 'bob', amount: 40 },
        path: ['payer'],
        callPath: ['p1'],
        reason: 'approval',
      },
    ]);
    expect(transfers).toEqual([]);
    // the call of the same step that finished keeps its result
    expect(lookups).toHaveLength(1);
    expect(
      waiting
        .currentStep()
        ?.toolExecutions()
        .map((e) => [e.toolCallId(), e.value()]),
    ).toEqual([['b1', 100]]);
    expect(
      waiting
        .approval()
        ?.children.p1?.pendingApprovals()
        .map((p) => p.toolCallId),
    ).toEqual(['t1']);
  });

  it('approving resumes the child where it waited: no model call repeats, then the caller goes on', async () => {
    const { agent, transfers, lookups, payer, root } = twoLevels();
    const waiting = await agent.execute(ask());
    expect([root.calls, payer.calls]).toEqual([1, 1]);
    const done = await agent.decide(waiting, [{ toolCallId: 't1', type: 'approve' }]);
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(done.finalResponse()).toBe('all done');
    expect(transfers).toEqual([{ to: 'bob', amount: 40 }]);
    expect(lookups).toHaveLength(1);
    expect([root.calls, payer.calls]).toEqual([2, 2]);
    const step = done.steps()[0];
    expect(step?.toolExecutions().map((e) => [e.toolCallId(), e.value()])).toEqual([
      ['b1', 100],
      ['p1', 'payer done'],
    ]);
    const child = step?.toolExecutions()[1]?.childState();
    expect(child?.steps()[0]?.toolExecutions()[0]?.value()).toBe('sent 40 to bob');
    expect(
      done
        .messages()
        .filter((m) => m.role === 'tool')
        .map((m) => m.content),
    ).toEqual(['100', 'payer done']);
    expect(done.approval()).toBeNull();
  });

  it('reports each call of the waiting step started once, and runs its beforeToolUse hooks once', async () => {
    const { transfer, balance } = bank();
    const seen: string[] = [];
    const agent = createAgent({
      driver: scriptedDriver([
        { toolCalls: [{ name: 'balance', args: {}, id: 'b1' }, task('payer', 'p1')] },
        { text: 'all done' },
      ]),
      tools: { balance },
      hooks: [{ name: 'watch', beforeToolUse: (_state, { toolCall }) => void seen.push(toolCall.id) }],
      subagents: {
        agents: {
          payer: {
            description: 'Pays',
            driver: scriptedDriver([{ toolCalls: [transferCall()] }, { text: 'paid' }]),
            tools: { transfer },
            hooks: [],
          },
        },
      },
    });
    const started: string[] = [];
    const onEvent = (event: AgentEvent) => {
      if (event.type === 'tool.started') started.push(event.toolCallId);
    };
    const waiting = await agent.execute(ask(), { onEvent });
    const done = await agent.decide(waiting, [{ toolCallId: 't1', type: 'approve' }], { onEvent });
    expect(done.finalResponse()).toBe('all done');
    // onEvent gets the subagent's events too: its call t1 starts once, after the decision
    expect(started).toEqual(['b1', 'p1', 't1']);
    expect(seen).toEqual(['b1', 'p1']);
  });

  it('round-trips the waiting tree through JSON as one document, and the restored state takes the decision', async () => {
    const { agent, transfers } = twoLevels();
    const waiting = await agent.execute(ask());
    const json = JSON.parse(JSON.stringify(waiting));
    const restored = AgentState.fromJSON(json);
    expect(restored.toJSON()).toEqual(json);
    expect(restored.pendingApprovals()).toEqual(waiting.pendingApprovals());
    const done = await agent.decide(restored, [{ toolCallId: 't1', type: 'approve' }]);
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(transfers).toHaveLength(1);
  });

  it('a rejection inside the child is told to the child model; an edit runs with the new input', async () => {
    const rejected = twoLevels();
    const done = await rejected.agent.decide(await rejected.agent.execute(ask()), [
      { toolCallId: 't1', type: 'reject', reason: 'too much' },
    ]);
    const child = done.steps()[0]?.toolExecutions()[1]?.childState();
    expect(rejected.transfers).toEqual([]);
    expect(child?.steps()[0]?.toolExecutions()[0]?.wasBlocked()).toBe(true);
    expect(child?.messages().find((m) => m.role === 'tool')?.content).toBe(
      'Error: Rejected by a person: too much',
    );

    const edited = twoLevels();
    const waiting = await edited.agent.execute(ask());
    await expect(
      edited.agent.decide(waiting, [{ toolCallId: 't1', type: 'edit', args: { to: 'bob', amount: -1 } }]),
    ).rejects.toMatchObject({ code: 'APPROVAL_INVALID_EDIT' });
    await edited.agent.decide(waiting, [{ toolCallId: 't1', type: 'edit', args: { to: 'bob', amount: 5 } }]);
    expect(edited.transfers).toEqual([{ to: 'bob', amount: 5 }]);
  });

  it('refuses ids that are not pending and changes nothing', async () => {
    const { agent, transfers } = twoLevels();
    const waiting = await agent.execute(ask());
    const refused = agent.decide(waiting, [{ toolCallId: 'p1', type: 'approve' }]);
    await expect(refused).rejects.toBeInstanceOf(ApprovalError);
    await expect(refused).rejects.toMatchObject({ code: 'APPROVAL_NOT_PENDING' });
    await expect(
      agent.decide(waiting, [{ toolCallId: 't1', type: 'approve', path: ['someone-else'] }]),
    ).rejects.toMatchObject({ code: 'APPROVAL_NOT_PENDING' });
    expect(transfers).toEqual([]);
    expect(waiting.pendingApprovals()).toHaveLength(1);
  });

  it('refuses decisions that are not decisions, naming the field, before anything changes', async () => {
    const { agent, transfers } = twoLevels();
    const waiting = await agent.execute(ask());
    const bad: unknown[] = [
      [null, 'decisions[0]'],
      [{ toolCallId: 't1', type: 'approve', path: 'payer' }, 'decisions[0].path'],
      [{ toolCallId: 't1', type: 'maybe' }, 'decisions[0].type'],
      [{ toolCallId: 7, type: 'approve' }, 'decisions[0].toolCallId'],
    ];
    for (const [decision, argument] of bad as [unknown, string][]) {
      await expect(agent.decide(waiting, [decision as ApprovalInput])).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
        argument,
      });
    }
    expect(transfers).toEqual([]);
  });

  it('a waiting tree decided by an agent without that subagent: the call fails as an unknown tool, nothing runs', async () => {
    const { agent, transfers } = twoLevels();
    const waiting = await agent.execute(ask());
    const other = createAgent({ driver: scriptedDriver([{ text: 'no payer here' }]) });
    const done = await other.decide(waiting, [
      { toolCallId: 't1', type: 'edit', args: { to: 'eve', amount: 1e9 } },
    ]);
    expect(transfers).toEqual([]);
    const failed = done
      .steps()[0]
      ?.toolExecutions()
      .find((e) => e.toolCallId() === 'p1');
    expect(failed?.error()?.code).toBe('UNKNOWN_TOOL');
    expect(done.finalResponse()).toBe('no payer here');
  });

  it('works at depth three: the decision walks down two levels', async () => {
    const { transfer, transfers } = bank();
    const clerk = counted([{ toolCalls: [transferCall(7, 'deep')] }, { text: 'clerk paid' }]);
    const manager = counted([{ toolCalls: [task('clerk', 'c1')] }, { text: 'manager reports: clerk paid' }]);
    const root = counted([{ toolCalls: [task('manager', 'm1')] }, { text: 'root done' }]);
    const agent = createAgent({
      driver: root.driver,
      subagents: {
        maxDepth: 3,
        agents: {
          manager: {
            description: 'Manages',
            driver: manager.driver,
            subagents: {
              agents: { clerk: { description: 'Pays', driver: clerk.driver, tools: { transfer } } },
            },
          },
        },
      },
    });
    const waiting = await agent.execute(ask());
    expect(waiting.pendingApprovals()).toEqual([
      {
        toolCallId: 'deep',
        toolName: 'transfer',
        args: { to: 'bob', amount: 7 },
        path: ['manager', 'clerk'],
        callPath: ['m1', 'c1'],
        reason: 'approval',
      },
    ]);
    const restored = AgentState.fromJSON(JSON.parse(JSON.stringify(waiting)));
    const done = await agent.decide(restored, [{ toolCallId: 'deep', type: 'approve' }]);
    expect(done.finalResponse()).toBe('root done');
    expect(transfers).toEqual([{ to: 'bob', amount: 7 }]);
    expect([root.counter.calls, manager.counter.calls, clerk.counter.calls]).toEqual([2, 2, 2]);
  });

  it('tells calls with the same id in two children apart by path', async () => {
    const { transfer, transfers } = bank();
    const script = (): ScriptEntry[] => [{ toolCalls: [transferCall(1, 'same')] }, { text: 'ok' }];
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [task('left', 'l1'), task('right', 'r1')] }, { text: 'done' }]),
      subagents: {
        agents: {
          left: { description: 'Left', driver: scriptedDriver(script()), tools: { transfer } },
          right: { description: 'Right', driver: scriptedDriver(script()), tools: { transfer } },
        },
      },
    });
    const waiting = await agent.execute(ask());
    expect(waiting.pendingApprovals().map((p) => p.path)).toEqual([['left'], ['right']]);
    await expect(agent.decide(waiting, [{ toolCallId: 'same', type: 'approve' }])).rejects.toMatchObject({
      code: 'APPROVAL_AMBIGUOUS',
    });
    const half = await agent.decide(waiting, [{ toolCallId: 'same', type: 'approve', path: ['left'] }]);
    expect(half.pendingApprovals().map((p) => p.path)).toEqual([['right']]);
    expect(transfers).toEqual([]);
    const done = await agent.decide(half, [{ toolCallId: 'same', type: 'reject', path: ['right'] }]);
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(transfers).toEqual([{ to: 'bob', amount: 1 }]);
  });

  it('tells apart two parallel calls of one subagent waiting on the same id by callPath', async () => {
    const { transfer, transfers } = bank();
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [task('payer', 'p1'), task('payer', 'p2')] }, { text: 'done' }]),
      subagents: {
        agents: {
          payer: {
            description: 'Pays',
            driver: scriptedDriver([{ toolCalls: [transferCall(1, 'same')] }, { text: 'ok' }]),
            tools: { transfer },
          },
        },
      },
    });
    const waiting = await agent.execute(ask());
    expect(waiting.pendingApprovals().map((p) => [p.path, p.callPath])).toEqual([
      [['payer'], ['p1']],
      [['payer'], ['p2']],
    ]);
    for (const path of [undefined, ['payer']]) {
      await expect(
        agent.decide(waiting, [{ toolCallId: 'same', type: 'approve', ...(path && { path }) }]),
      ).rejects.toMatchObject({ code: 'APPROVAL_AMBIGUOUS', message: expect.stringContaining('callPath') });
    }
    const half = await agent.decide(waiting, [{ toolCallId: 'same', type: 'approve', callPath: ['p2'] }]);
    expect(half.pendingApprovals().map((p) => p.callPath)).toEqual([['p1']]);
    await expect(
      agent.decide(half, [{ toolCallId: 'same', type: 'approve', callPath: ['p2'] }]),
    ).rejects.toMatchObject({ code: 'APPROVAL_NOT_PENDING' });
    const done = await agent.decide(half, [{ toolCallId: 'same', type: 'reject', callPath: ['p1'] }]);
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(transfers).toEqual([{ to: 'bob', amount: 1 }]);
    const [first, second] = done.steps()[0]?.toolExecutions() ?? [];
    expect(first?.childState()?.steps()[0]?.toolExecutions()[0]?.wasBlocked()).toBe(true);
    expect(second?.childState()?.steps()[0]?.toolExecutions()[0]?.value()).toBe('sent 1 to bob');
  });

  it('the approve event takes callPath too', async () => {
    const { transfer } = bank();
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [task('payer', 'p1'), task('payer', 'p2')] }, { text: 'done' }]),
      subagents: {
        agents: {
          payer: {
            description: 'Pays',
            driver: scriptedDriver([{ toolCalls: [transferCall(1, 'same')] }, { text: 'ok' }]),
            tools: { transfer },
          },
        },
      },
    });
    const waiting = await agent.execute(ask());
    const actor = agent.createActor(waiting);
    const refused: AgentEvent[] = [];
    const decided: AgentEvent[] = [];
    actor.on('event.refused', (e) => void refused.push(e));
    actor.on('approval.decided', (e) => void decided.push(e));
    actor.start();
    actor.send({ type: 'execute' });
    actor.send({ type: 'approve', toolCallId: 'same', path: ['payer'] });
    expect(refused).toHaveLength(1);
    actor.send({ type: 'approve', toolCallId: 'same', callPath: ['p1'] });
    expect(decided).toMatchObject([{ toolCallId: 'same', callPath: ['p1'] }]);
    actor.stop();
  });

  it('a decision after the deadline ends the wait with TimeLimitReached, running nothing', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const { transfer, transfers } = bank();
      const agent = createAgent({
        driver: scriptedDriver([{ toolCalls: [task('payer', 'p1')] }, { text: 'late' }]),
        budget: new ExecutionBudget({ maxSeconds: 60 }),
        subagents: {
          agents: {
            payer: {
              description: 'Pays',
              driver: scriptedDriver([{ toolCalls: [transferCall()] }, { text: 'paid' }]),
              tools: { transfer },
            },
          },
        },
      });
      const waiting = await agent.execute(ask());
      vi.setSystemTime(Date.now() + 120_000);
      const done = await agent.decide(waiting, [{ toolCallId: 't1', type: 'approve' }]);
      expect(done.stopReason()).toBe(StopReason.TimeLimitReached);
      expect(done.steps()[0]?.toolExecutions()[0]?.error()?.code).toBe('APPROVAL_TIMEOUT');
      expect(transfers).toEqual([]);
    } finally {
      vi.useRealTimers();
    }
  });
  it("a child's own deadline ends its wait when it resumes: its call fails, the caller goes on", async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      const { transfer, transfers } = bank();
      const agent = createAgent({
        driver: scriptedDriver([{ toolCalls: [task('payer', 'p1')] }, { text: 'the payer ran out of time' }]),
        subagents: {
          agents: {
            payer: {
              description: 'Pays',
              driver: scriptedDriver([{ toolCalls: [transferCall()] }, { text: 'paid' }]),
              tools: { transfer },
              budget: new ExecutionBudget({ maxSeconds: 60 }),
            },
          },
        },
      });
      const waiting = await agent.execute(ask());
      vi.setSystemTime(Date.now() + 120_000);
      const done = await agent.decide(waiting, [{ toolCallId: 't1', type: 'approve' }]);
      expect(transfers).toEqual([]);
      const call = done.steps()[0]?.toolExecutions()[0];
      expect(call?.error()?.message).toContain('time_limit_reached');
      expect(call?.childState()?.stopReason()).toBe(StopReason.TimeLimitReached);
      expect(done.finalResponse()).toBe('the payer ran out of time');
    } finally {
      vi.useRealTimers();
    }
  });
});
