/**
 * Replaying a run that went through crash recovery: where the recording shows a call a crash
 * interrupted (`ToolExecution.resolution()`), the replayed step finds it interrupted as the load
 * after the crash found it, with the person's decision on it taken again (approve, an edit, reject
 * with its reason, or complete with the recorded result), as `agent.decide` takes decisions before
 * the run goes on. The other calls of the step run (from the recording) as after the recovery.
 */
import type { Driver } from '../drivers/driver';
import type { AgentState } from '../state/agent-state';
import type { ApprovalDecision } from '../state/approval';
import { firstDifference } from '../state/json-difference';
import type { ToolExecution } from '../state/tool-execution';
import type { ReplaySession } from './replay-tracks';

/** `driver`, whose answered steps (of the replay `current()` runs now) find the calls the recording shows interrupted waiting as such, decided. */
export function interruptedAsRecorded(driver: Driver, current: () => ReplaySession): Driver {
  return {
    name: driver.name,
    async infer(state, context) {
      const answered = await driver.infer(state, context);
      const session = current();
      return session.runsLive(answered) ? answered : withRecordedInterruptions(answered, session);
    },
  };
}

function withRecordedInterruptions(state: AgentState, session: ReplaySession): AgentState {
  const decided: [string, ApprovalDecision][] = [];
  for (const call of state.currentStep()?.requestedToolCalls() ?? []) {
    const recorded = session.recordedExecution(state, call.id);
    if (recorded?.resolution() === undefined) continue;
    decided.push([call.id, recordedDecision(recorded, call.args)]);
  }
  const waiting = stillInterrupted(state, session);
  if (decided.length === 0 && waiting.length === 0) return state;
  let interrupted = state.withToolsInterrupted([...decided.map(([id]) => id), ...waiting]);
  for (const [id, decision] of decided) interrupted = interrupted.withApprovalDecision(id, decision);
  return interrupted;
}

/**
 * The calls of this step that the recording ends waiting on as interrupted, undecided (a session
 * saved after a crash, before a person decided): the replay waits on them there too.
 */
function stillInterrupted(state: AgentState, session: ReplaySession): string[] {
  const recorded = session.trackOf(state).recorded;
  const approval = recorded.stepCount() === state.stepCount() ? recorded.approval() : null;
  return (approval?.interrupted ?? []).filter((id) => !Object.hasOwn(approval?.decisions ?? {}, id));
}

/** The decision a person took on a call the recording shows interrupted, from how it ended. */
function recordedDecision(recorded: ToolExecution, args: unknown): ApprovalDecision {
  if (recorded.resolution() === 'completed') return { type: 'complete', result: recorded.value() };
  if (recorded.resolution() === 'rejected') {
    const reason = REJECTED.exec(recorded.error()?.message ?? '')?.[1];
    return reason === undefined ? { type: 'reject' } : { type: 'reject', reason };
  }
  const recordedArgs = recorded.toolCall().args;
  return firstDifference(recordedArgs, args) ? { type: 'edit', args: recordedArgs } : { type: 'approve' };
}

/** The reason in the message of an interrupted call a person rejected (`approvalDecisions` writes it). */
const REJECTED = /\(rejected by a person: ([\s\S]*)\)\.$/;
