import type { AgentState } from '../state/agent-state';
import type { ExecutionBudget } from '../state/execution-budget';
import type { AgentEvent } from '../state/loop-events';
import { StopSignal } from '../state/stop-signal';

export interface InvariantInput {
  readonly snapshot: { readonly value: unknown };
  readonly state: AgentState;
  /** The state at the previous check of the same run, if any. */
  readonly previous?: AgentState;
  readonly budget: ExecutionBudget;
  /** The events the actor emitted so far. */
  readonly events: readonly AgentEvent[];
}

const outcomes = new Set(['completed', 'stopped', 'failed']);

/**
 * The loop's invariants, checked on a snapshot of a running agent; returns what is broken (empty
 * when all hold):
 * - the ExecutionStatus matches the machine state (Failed only once a failure sent the run to
 *   `failing`, `afterExecution` or `failingAfterExecution`, or while the step that failed closes
 *   its cycle in `afterStep` and `persist`; the outcome's status while `finalizing` saves it);
 * - the step count never exceeds maxSteps;
 * - usage never exceeds maxTokens by more than the last step;
 * - every started tool call is recorded once (exactly once when the execution ended);
 * - completed steps are never lost, and the conversation never loses messages within an execution;
 * - the final stop reason is the highest-priority signal.
 */
export function invariantViolations({ snapshot, state, previous, budget, events }: InvariantInput): string[] {
  const broken: string[] = [];
  const value = snapshot.value;
  const status = state.status();
  if (typeof value === 'string') {
    // a state saved while awaiting approval waits in `pending` (in progress) until it runs again
    const waiting = value === 'pending' && status === 'in_progress' && state.approval() !== null;
    if (status !== value && !waiting) broken.push(`status is ${status} in state ${value}`);
  } else {
    const path = JSON.stringify(value);
    const failing = [
      '"failing"',
      '"afterExecution"',
      '"failingAfterExecution"',
      '"afterStep"',
      '"step":"persist"',
    ].some((name) => path.includes(name));
    const finalizing = path.includes('"finalizing"');
    const ok = finalizing
      ? status !== 'in_progress' && status !== 'pending'
      : status === 'in_progress' || (status === 'failed' && failing);
    if (!ok) broken.push(`status is ${status} in state ${path}`);
  }

  if (budget.maxSteps !== null && state.stepCount() > budget.maxSteps) {
    broken.push(`${state.stepCount()} steps recorded, more than maxSteps ${budget.maxSteps}`);
  }
  if (budget.maxTokens !== null) {
    const last = state.currentStep() ?? state.lastStep();
    const allowed = budget.maxTokens + (last?.usage().totalTokens ?? 0);
    if (state.usage().totalTokens > allowed) {
      broken.push(
        `usage ${state.usage().totalTokens} tokens exceeds maxTokens ${budget.maxTokens} by more than the last step`,
      );
    }
  }

  const executionId = state.executionId();
  const recorded = [...state.steps(), ...(state.currentStep() ? [state.currentStep()!] : [])].flatMap((s) =>
    s.toolExecutions().map((e) => e.toolCallId()),
  );
  const counts = new Map<string, number>();
  for (const id of recorded) counts.set(id, (counts.get(id) ?? 0) + 1);
  for (const [id, count] of counts) if (count > 1) broken.push(`tool call ${id} recorded ${count} times`);
  if (typeof value === 'string' && outcomes.has(value)) {
    for (const event of events) {
      if (
        event.type === 'tool.started' &&
        event.executionId === executionId &&
        !counts.has(event.toolCallId)
      ) {
        broken.push(`tool call ${event.toolCallId} started but never recorded`);
      }
    }
    const signal = StopSignal.highest(state.execution()?.continuation().stopSignals ?? []);
    const expected = signal?.reason ?? (status === 'completed' ? 'completed' : null);
    if (state.stopReason() !== expected) {
      broken.push(`stop reason is ${state.stopReason()}, the highest-priority signal says ${expected}`);
    }
  }

  if (previous && previous.executionId() === executionId) {
    const before = previous.steps().map((s) => s.id());
    const now = state.steps().map((s) => s.id());
    if (before.some((id, i) => now[i] !== id)) broken.push('a completed step was lost or replaced');
    // context policies shape the prompt only: the conversation itself only grows
    if (state.messageList().size < previous.messageList().size)
      broken.push('conversation messages were removed');
  }
  return broken;
}
