import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ApprovalError } from '../../src/state/approval-error';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { ExecutionStatus } from '../../src/state/execution-status';
import type { AgentEvent } from '../../src/state/loop-events';
import { StopReason } from '../../src/state/stop-reason';
import { defineTool } from '../../src/tools/define-tool';
import { recordEvents, waitForState } from '../support/agents';
import { approvalAgent, TRANSFER_LEDGER_ENV } from '../support/approval-agent';

const dirs: string[] = [];
afterEach(() => {
  vi.useRealTimers();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-approval-'));
  dirs.push(dir);
  return dir;
};

function bank() {
  const transfers: unknown[] = [];
  const lookups: unknown[] = [];
  const transfer = defineTool({
    description: 'Transfer money',
    inputSchema: z.object({ to: z.string(), amount: z.number().positive() }),
    needsApproval: true,
    execute: async (input) => {
      transfers.push(input);
      return `sent ${input.amount} to ${input.to}`;
    },
  });
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

const transferCall = (amount = 40, id = 't1') => ({ name: 'transfer', args: { to: 'bob', amount }, id });
const ask = () => AgentState.empty().withUserMessage('Pay Bob 40');

describe('tool approval', () => {
  it('waits for approval: execute resolves with the pending calls; approving runs the call once', async () => {
    const { transfer, transfers } = bank();
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [transferCall()] }, { text: 'Paid.' }]),
      tools: { transfer },
    });
    const waiting = await agent.execute(ask());
    expect(waiting.status()).toBe(ExecutionStatus.InProgress);
    expect(waiting.pendingApprovals()).toEqual([
      { toolCallId: 't1', toolName: 'transfer', args: { to: 'bob', amount: 40 }, reason: 'approval' },
    ]);
    expect(waiting.stepCount()).toBe(0);
    expect(transfers).toEqual([]);

    const done = await agent.decide(waiting, [{ toolCallId: 't1', type: 'approve' }]);
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(done.finalResponse()).toBe('Paid.');
    expect(transfers).toEqual([{ to: 'bob', amount: 40 }]);
    expect(done.steps()[0]?.toolExecutions()[0]?.value()).toBe('sent 40 to bob');
    expect(done.approval()).toBeNull();
  });

  it('records a rejected call as blocked with the reason, and the model is told', async () => {
    const { transfer, transfers } = bank();
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [transferCall()] }, { text: 'Not paid.' }]),
      tools: { transfer },
    });
    const done = await agent.decide(await agent.execute(ask()), [
      { toolCallId: 't1', type: 'reject', reason: 'too much' },
    ]);
    const execution = done.steps()[0]?.toolExecutions()[0];
    expect(transfers).toEqual([]);
    expect(execution?.wasBlocked()).toBe(true);
    expect(execution?.error()?.message).toBe('Rejected by a person: too much');
    expect(done.messages().find((m) => m.role === 'tool')?.content).toBe(
      'Error: Rejected by a person: too much',
    );
    expect(done.status()).toBe(ExecutionStatus.Completed);
  });

  it('runs an edited call with the new input, validated against the tool schema', async () => {
    const { transfer, transfers } = bank();
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [transferCall(400)] }, { text: 'Paid less.' }]),
      tools: { transfer },
    });
    const waiting = await agent.execute(ask());
    await expect(
      agent.decide(waiting, [{ toolCallId: 't1', type: 'edit', args: { to: 'bob', amount: -5 } }]),
    ).rejects.toMatchObject({
      code: 'APPROVAL_INVALID_EDIT',
    });
    expect(waiting.pendingApprovals()).toHaveLength(1);
    const done = await agent.decide(waiting, [
      { toolCallId: 't1', type: 'edit', args: { to: 'bob', amount: 40 } },
    ]);
    expect(transfers).toEqual([{ to: 'bob', amount: 40 }]);
    expect(done.steps()[0]?.toolExecutions()[0]?.args()).toEqual({ to: 'bob', amount: 40 });
  });

  it('runs the calls that need no approval of the same step too, after the decision', async () => {
    const { transfer, balance, transfers, lookups } = bank();
    const driver = scriptedDriver([
      { toolCalls: [{ name: 'balance', args: {}, id: 'b1' }, transferCall()] },
      { text: 'Done.' },
    ]);
    const agent = createAgent({ driver, tools: { transfer, balance } });
    const waiting = await agent.execute(ask());
    expect(waiting.pendingApprovals().map((p) => p.toolCallId)).toEqual(['t1']);
    const done = await agent.decide(waiting, [{ toolCallId: 't1', type: 'approve' }]);
    expect(lookups).toHaveLength(1);
    expect(transfers).toHaveLength(1);
    expect(
      done
        .steps()[0]
        ?.toolExecutions()
        .map((e) => e.toolCallId()),
    ).toEqual(['b1', 't1']);
  });

  it('refuses an unknown id and a second decision on the same call with a typed error; nothing runs twice', async () => {
    const { transfer, transfers } = bank();
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [transferCall()] }, { text: 'ok' }]),
      tools: { transfer },
    });
    const waiting = await agent.execute(ask());
    const unknown = agent.decide(waiting, [{ toolCallId: 'nope', type: 'approve' }]);
    await expect(unknown).rejects.toBeInstanceOf(ApprovalError);
    await expect(unknown).rejects.toMatchObject({ code: 'APPROVAL_NOT_PENDING', toolCallId: 'nope' });
    await expect(
      agent.decide(waiting, [
        { toolCallId: 't1', type: 'approve' },
        { toolCallId: 't1', type: 'approve' },
      ]),
    ).rejects.toMatchObject({
      code: 'APPROVAL_NOT_PENDING',
    });
    expect(transfers).toEqual([]);
    const done = await agent.decide(waiting, [{ toolCallId: 't1', type: 'approve' }]);
    await expect(agent.decide(done, [{ toolCallId: 't1', type: 'approve' }])).rejects.toMatchObject({
      code: 'APPROVAL_NOT_PENDING',
    });
    expect(transfers).toHaveLength(1);
  });

  it('in a live session actor: events decide, wrong ids and a user message meanwhile are refused with an event', async () => {
    const { transfer, transfers } = bank();
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [transferCall()] }, { text: 'Paid.' }]),
      tools: { transfer },
    });
    const actor = agent.createActor(AgentState.empty());
    const events = recordEvents(actor);
    actor.start();
    actor.send({ type: 'user.message', text: 'Pay Bob' });
    await waitForState(actor, (s) => JSON.stringify(s.value).includes('"waiting"'));
    actor.send({ type: 'user.message', text: 'also pay Carol' });
    actor.send({ type: 'approve', toolCallId: 'wrong' });
    expect(
      events
        .filter((e) => e.type === 'event.refused')
        .map((e) => e.type === 'event.refused' && [e.event, e.error.code]),
    ).toEqual([
      ['user.message', 'APPROVAL_PENDING'],
      ['approve', 'APPROVAL_NOT_PENDING'],
    ]);
    expect(
      actor
        .getSnapshot()
        .context.state.messages()
        .map((m) => m.content),
    ).not.toContain('also pay Carol');
    actor.send({ type: 'approve', toolCallId: 't1' });
    actor.send({ type: 'approve', toolCallId: 't1' });
    await waitForState(actor, (s) => s.value === 'completed');
    expect(transfers).toHaveLength(1);
    const types = events.map((e: AgentEvent) => e.type);
    expect(types).toContain('approval.requested');
    expect(types.filter((t) => t === 'approval.decided')).toHaveLength(1);
    expect(types.filter((t) => t === 'event.refused')).toHaveLength(2);
    actor.stop();
  });

  it('refuses execute on a state awaiting approval', async () => {
    const { transfer } = bank();
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [transferCall()] }]),
      tools: { transfer },
    });
    const waiting = await agent.execute(ask());
    await expect(agent.execute(waiting.withUserMessage('hello?'))).rejects.toMatchObject({
      code: 'APPROVAL_PENDING',
    });
  });

  it('refuses a new message with one ApprovalError.pending, from the actor, execute and chat', async () => {
    const { transfer } = bank();
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [transferCall(40, 't1'), transferCall(2, 't2')] }]),
      tools: { transfer },
      store: new SqliteSessionStore(join(tempDir(), 'chat.db')),
    });
    const waiting = await agent.chat('s1', 'Pay Bob');
    const refusal = ApprovalError.pending(waiting);
    expect(refusal).toMatchObject({ code: 'APPROVAL_PENDING', pendingApprovals: ['t1', 't2'] });
    expect(refusal.message).toContain("approvals 't1', 't2'");
    const refused = { name: 'ApprovalError', code: 'APPROVAL_PENDING', message: refusal.message };
    await expect(agent.execute(waiting.withUserMessage('hello?'))).rejects.toMatchObject(refused);
    await expect(agent.chat('s1', 'hello?')).rejects.toMatchObject(refused);
    const actor = agent.createActor(waiting);
    const events = recordEvents(actor);
    actor.start();
    actor.send({ type: 'user.message', text: 'hello?' });
    const event = events.find((e) => e.type === 'event.refused');
    expect(event?.type === 'event.refused' && event.error).toMatchObject(refused);
    actor.stop();
  });

  it('round-trips a waiting state through JSON, and the restored state takes the decision', async () => {
    const { transfer, transfers } = bank();
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [transferCall()] }, { text: 'Paid.' }]),
      tools: { transfer },
    });
    const waiting = await agent.execute(ask());
    const restored = AgentState.fromJSON(JSON.parse(JSON.stringify(waiting)));
    expect(restored.toJSON()).toEqual(JSON.parse(JSON.stringify(waiting)));
    expect(restored.pendingApprovals()).toEqual(waiting.pendingApprovals());
    const done = await agent.decide(restored, [{ toolCallId: 't1', type: 'approve' }]);
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(transfers).toHaveLength(1);
  });

  it('counts the wait against no step, and ends it with TimeLimitReached when maxSeconds runs out', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const { transfer, transfers } = bank();
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [transferCall()] }, { text: 'late' }]),
      tools: { transfer },
      budget: new ExecutionBudget({ maxSteps: 1, maxSeconds: 60 }),
    });
    const actor = agent.createActor(ask());
    actor.start();
    actor.send({ type: 'execute' });
    await vi.waitFor(() => expect(JSON.stringify(actor.getSnapshot().value)).toContain('"waiting"'));
    expect(actor.getSnapshot().context.state.stepCount()).toBe(0);
    await vi.advanceTimersByTimeAsync(61_000);
    const state = actor.getSnapshot().context.state;
    expect(actor.getSnapshot().value).toBe('stopped');
    expect(state.stopReason()).toBe(StopReason.TimeLimitReached);
    expect(state.stopSignal()?.context).toMatchObject({ limit: 'approval', pending: ['t1'] });
    expect(state.steps()[0]?.toolExecutions()[0]?.error()?.code).toBe('APPROVAL_TIMEOUT');
    expect(transfers).toEqual([]);
    actor.stop();
  });

  it('a decision that comes after the deadline ends the run with TimeLimitReached, running nothing', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const { transfer, transfers } = bank();
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [transferCall()] }, { text: 'late' }]),
      tools: { transfer },
      budget: new ExecutionBudget({ maxSeconds: 60 }),
    });
    const waiting = await agent.execute(ask());
    vi.setSystemTime(Date.now() + 120_000);
    const done = await agent.decide(waiting, [{ toolCallId: 't1', type: 'approve' }]);
    expect(done.stopReason()).toBe(StopReason.TimeLimitReached);
    expect(transfers).toEqual([]);
  });

  it('survives a process restart: a child process asks, exits; this process loads the session and decides', async () => {
    const dir = tempDir();
    const db = join(dir, 'agents.db');
    const ledger = join(dir, 'ledger.txt');
    const child = spawn(process.execPath, ['--import', 'tsx', 'tests/support/approval-run.ts', db, 'pay-1'], {
      env: { ...process.env, [TRANSFER_LEDGER_ENV]: ledger },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, output).toBe(0);
    expect(output).toContain('waiting for approval of t1');

    const store = new SqliteSessionStore(db);
    const agent = approvalAgent(store, ledger);
    expect((await store.load('pay-1'))?.state.pendingApprovals().map((p) => p.toolCallId)).toEqual(['t1']);
    const done = await agent.decide('pay-1', [{ toolCallId: 't1', type: 'approve' }]);
    const stored = await store.load('pay-1');
    await store.close();
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(stored?.state.status()).toBe(ExecutionStatus.Completed);
    expect(readFileSync(ledger, 'utf8').trim().split('\n')).toEqual(['t1']);
  });
});
