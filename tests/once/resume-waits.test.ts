/**
 * #44 item 9: `agent.resume(id)` after a crash (a child process SIGKILLed inside an unsafe call)
 * returns a state that waits for a decision the way an approval wait does: the same status, the
 * same waiting request and pending calls, `reason: 'interrupted'` the one difference.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import type { AgentEvent } from '../../src/state/loop-events';
import { interruptedAgent } from '../support/interrupted-agent';
import { crashInPay, crashStore } from '../support/interrupted-crash';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** What a reader of a state sees of its wait. */
function waitOf(state: AgentState) {
  const approval = state.approval();
  return {
    status: state.status(),
    hasActiveExecution: state.hasActiveExecution(),
    shouldStop: state.shouldStop(),
    stopReason: state.stopReason(),
    stepCount: state.stepCount(),
    currentStep: state.currentStep() !== null,
    approval: approval && {
      ...approval,
      requestedAt: undefined,
      signatures: undefined,
      children: Object.keys(approval.children),
    },
    pending: state
      .pendingApprovals()
      .map(({ signature, ...p }) => ({ ...p, signed: typeof signature === 'string' })),
  };
}

/** The wait's differences from an approval wait: the reason of each pending call, the interrupted ids. */
function asApprovalWait(wait: ReturnType<typeof waitOf>) {
  const { interrupted: _interrupted, ...approval } = (wait.approval ?? {}) as Record<string, unknown>;
  return { ...wait, approval, pending: wait.pending.map((p) => ({ ...p, reason: 'approval' })) };
}

describe.each(['root', 'nested'] as const)('resume after a crash inside an unsafe call (%s)', (where) => {
  it('returns a state waiting for a decision as an approval wait does, reason interrupted, and announces it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'resume-waits-'));
    dirs.push(dir);
    const crashed = crashStore('sqlite', dir);
    await crashInPay('sqlite', crashed.path, 's1', where);
    const asked = crashStore('sqlite', dir.replace(/$/, '-asked'));
    dirs.push(dir.replace(/$/, '-asked'));
    const store = crashed.open();
    const askedStore = asked.open();
    try {
      // a fresh process: the crashed child is gone, this one never ran the session
      const { agent, effects } = interruptedAgent(store, { nested: where === 'nested' });
      const events: AgentEvent[] = [];
      const resumed = await agent.resume('s1', { onEvent: (event) => events.push(event) });
      const approvalEvents: AgentEvent[] = [];
      const approvalWait = await interruptedAgent(askedStore, {
        nested: where === 'nested',
        asked: true,
      }).agent.execute(AgentState.empty().withUserMessage('Pay Bob 5'), {
        sessionId: 's1',
        onEvent: (event) => approvalEvents.push(event),
      });

      expect(effects).toEqual([]);
      const wait = waitOf(resumed);
      expect(wait.status).toBe(ExecutionStatus.InProgress);
      expect(wait.pending).toEqual([
        expect.objectContaining({ toolName: 'pay', reason: 'interrupted', signed: true }),
      ]);
      expect(asApprovalWait(wait)).toEqual(waitOf(approvalWait));
      // the stored session waits alike
      expect(waitOf((await store.load('s1'))?.state as AgentState)).toEqual(wait);
      // and the resumed run announces its wait as an approval wait announces its own (the root's
      // announcement: a nested approval wait also has the subagent's own, sent as it ran, which a
      // resumed run does not run again)
      const requested = (list: AgentEvent[]) =>
        list
          .flatMap((e) => (e.type === 'approval.requested' && e.parentAgentId === null ? [e.toolCalls] : []))
          .map((calls) => calls.map((c) => [c.toolCallId, c.reason]));
      expect(requested(events)).toEqual([[[where === 'root' ? 'r1' : 'pay-1', 'interrupted']]]);
      expect(requested(approvalEvents)).toEqual([[[where === 'root' ? 'r1' : 'pay-1', 'approval']]]);
    } finally {
      await store.close();
      await askedStore.close();
    }
  }, 60_000);
});
