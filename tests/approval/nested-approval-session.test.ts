import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { ExecutionStatus } from '../../src/state/execution-status';
import type { AgentEvent } from '../../src/state/loop-events';
import { StopReason } from '../../src/state/stop-reason';
import { defineTool } from '../../src/tools/define-tool';
import { recordEvents, waitForState } from '../support/agents';
import { TRANSFER_LEDGER_ENV } from '../support/approval-agent';
import { nestedApprovalAgent } from '../support/nested-approval-agent';

const dirs: string[] = [];
afterEach(() => {
  vi.useRealTimers();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-nested-approval-'));
  dirs.push(dir);
  return dir;
};
const lines = (file: string) => readFileSync(file, 'utf8').trim().split('\n');
const ask = () => AgentState.empty().withUserMessage('Pay Bob 40');

/** root -> payer, whose transfer needs approval. */
function payerTree(budget?: ExecutionBudget) {
  const transfers: string[] = [];
  const transfer = defineTool({
    description: 'Transfer money',
    inputSchema: z.object({ to: z.string(), amount: z.number() }),
    needsApproval: true,
    execute: async (_input, { toolCallId }) => {
      transfers.push(toolCallId);
      return 'sent';
    },
  });
  const agent = createAgent({
    driver: scriptedDriver([
      { toolCalls: [{ name: 'payer', args: { task: 'pay bob' }, id: 'p1' }] },
      { text: 'root done' },
    ]),
    ...(budget && { budget }),
    store: new InMemorySessionStore(),
    subagents: {
      agents: {
        payer: {
          description: 'Pays',
          driver: scriptedDriver([
            { toolCalls: [{ name: 'transfer', args: { to: 'bob', amount: 40 }, id: 't1' }] },
            { text: 'paid' },
          ]),
          tools: { transfer },
        },
      },
    },
  });
  return { agent, transfers };
}

describe('approvals inside subagents, in sessions', () => {
  it('checkpoints the whole waiting tree under the root session; decide(sessionId) routes the decision down', async () => {
    const { agent, transfers } = payerTree();
    const store = agent.definition.store as InMemorySessionStore;
    await agent.execute(ask(), { sessionId: 's1' });
    const stored = await store.load('s1');
    expect(stored?.state.pendingApprovals()).toMatchObject([{ toolCallId: 't1', path: ['payer'] }]);
    expect(stored?.state.approval()?.children.p1?.currentStep()?.requestedToolCalls()).toHaveLength(1);
    const done = await agent.decide('s1', [{ toolCallId: 't1', type: 'approve' }]);
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(transfers).toEqual(['t1']);
    expect((await store.load('s1'))?.state.finalResponse()).toBe('root done');
  });

  it('in a live session actor: the approve event for a nested call reaches the child; a wrong id is refused', async () => {
    const { agent, transfers } = payerTree();
    const actor = agent.createActor(AgentState.empty());
    const events = recordEvents(actor);
    actor.start();
    actor.send({ type: 'user.message', text: 'Pay Bob' });
    await waitForState(actor, (s) => s.context.state.pendingApprovals().length > 0);
    const requested = events.find((e) => e.type === 'approval.requested');
    expect(requested?.type === 'approval.requested' && requested.toolCalls).toMatchObject([
      { toolCallId: 't1', path: ['payer'] },
    ]);
    actor.send({ type: 'approve', toolCallId: 'p1' });
    actor.send({ type: 'approve', toolCallId: 't1' });
    await waitForState(actor, (s) => s.value === 'completed');
    expect(transfers).toEqual(['t1']);
    const types = events.map((e: AgentEvent) => e.type);
    expect(types.filter((t) => t === 'event.refused')).toHaveLength(1);
    expect(types.filter((t) => t === 'approval.decided')).toHaveLength(1);
    expect(actor.getSnapshot().context.state.finalResponse()).toBe('root done');
    actor.stop();
  });

  it('ends a nested wait with TimeLimitReached when the root maxSeconds runs out', async () => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
    const { agent, transfers } = payerTree(new ExecutionBudget({ maxSeconds: 60 }));
    const actor = agent.createActor(ask());
    actor.start();
    actor.send({ type: 'execute' });
    await vi.waitFor(() => expect(actor.getSnapshot().context.state.pendingApprovals()).toHaveLength(1));
    await vi.advanceTimersByTimeAsync(61_000);
    const state = actor.getSnapshot().context.state;
    expect(actor.getSnapshot().value).toBe('stopped');
    expect(state.stopReason()).toBe(StopReason.TimeLimitReached);
    expect(state.steps()[0]?.toolExecutions()[0]?.error()?.code).toBe('APPROVAL_TIMEOUT');
    expect(transfers).toEqual([]);
    actor.stop();
  });

  it('survives a process restart: a child process waits on a nested call and exits; this process decides, no model call repeats', async () => {
    const dir = tempDir();
    const db = join(dir, 'agents.db');
    const ledger = join(dir, 'ledger.txt');
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'tests/support/nested-approval-run.ts', db, 'pay-1'],
      { env: { ...process.env, [TRANSFER_LEDGER_ENV]: ledger }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code, output).toBe(0);
    expect(output).toContain('waiting for approval of payer/t1');
    expect(lines(ledger)).toEqual(['model:root', 'model:payer']);

    const store = new SqliteSessionStore(db);
    const agent = nestedApprovalAgent(store, ledger);
    const done = await agent.decide('pay-1', [{ toolCallId: 't1', type: 'approve' }]);
    const stored = await store.load('pay-1');
    await store.close();
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(done.finalResponse()).toBe('Bob is paid.');
    expect(stored?.state.status()).toBe(ExecutionStatus.Completed);
    expect(lines(ledger)).toEqual(['model:root', 'model:payer', 'transfer:t1', 'model:payer', 'model:root']);
  });
});
