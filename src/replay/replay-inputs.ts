/**
 * The inputs from outside a recorded run that its replay sends again where the recording shows
 * them: a person's stop (placed by `recordUserStop`), the decisions on calls waiting for approval
 * (the agent's own, and those inside a waiting subagent), and an approval wait that timed out.
 */
import { SimulatedClock } from 'xstate';
import type { LoopEvent } from '../../machines/agentLoop';
import type { ErrorContext, Hook, StageContext } from '../hooks/hook';
import type { Agent } from '../runtime/agent-actor';
import { listened, runToOutcome } from '../runtime/run-to-outcome';
import type { AgentState } from '../state/agent-state';
import type { ApprovalInput } from '../state/approval';
import type { RunListener } from '../state/event-source';
import { firstDifference } from '../state/json-difference';
import { type Message, STEERED } from '../state/message';
import type { PendingApproval } from '../state/pending-approval';
import type { ToolExecution } from '../state/tool-execution';
import type { RecordedSteering, ReplaySession } from './replay-tracks';

/**
 * Runs the replayed execution to its outcome on one actor, sending it, where it waits for a
 * person, what the recording shows the person did: the recorded decisions, the person's stop (by
 * aborting `signal`, which the session's stop is part of), or the approval timeout (on the actor's
 * clock). Resolves waiting where the recording gives nothing more (a wait it ends in).
 */
export function runAsRecorded(
  agent: Agent,
  state: AgentState,
  session: ReplaySession,
  signal: AbortSignal,
  onEvent: RunListener | undefined,
): Promise<AgentState> {
  const clock = new SimulatedClock();
  const actor = agent.createActor(state, Object.assign(listened({}, onEvent), { clock }));
  session.steerInto = (message) => actor.send({ type: 'steer', message });
  session.sendStop = (reason) => actor.send({ type: 'stop', reason });
  const sent = new Set<string>();
  const waitsOn = (waiting: AgentState) => {
    const decisions = recordedDecisions(waiting, session).filter((d) => !sent.has(d.toolCallId));
    if (decisions.length > 0) {
      for (const decision of decisions) sent.add(decision.toolCallId);
      queueMicrotask(() => {
        for (const decision of decisions) actor.send(decisionEvent(decision));
      });
      return true;
    }
    if (session.stopsHere(waiting, 'awaitingApproval')) return true;
    if (!sent.has(TIMEOUT) && timedOut(waiting, session)) {
      sent.add(TIMEOUT);
      queueMicrotask(() => clock.increment(MAX_DELAY + 1));
      return true;
    }
    return false;
  };
  return runToOutcome(actor, signal, onEvent, waitsOn).finally(() => {
    session.steerInto = null;
    session.sendStop = null;
  });
}

const TIMEOUT = '(approval timeout)';
/** The longest delay a timer takes (the approval timeout's cap). */
const MAX_DELAY = 2_147_483_647;

function decisionEvent(decision: ApprovalInput): LoopEvent {
  const route = decision.callPath ? { callPath: decision.callPath } : {};
  if (decision.type === 'reject')
    return {
      type: 'reject',
      toolCallId: decision.toolCallId,
      reason: decision.reason,
      ...route,
    } as LoopEvent;
  if (decision.type === 'edit')
    return { type: 'edit', toolCallId: decision.toolCallId, input: decision.args, ...route } as LoopEvent;
  return { type: 'approve', toolCallId: decision.toolCallId, ...route } as LoopEvent;
}

/** The recorded run's wait for these calls ended in the approval timeout. */
function timedOut(state: AgentState, session: ReplaySession): boolean {
  // the timeout fails the agent's own call (the one that leads to a call inside a subagent)
  return state.pendingApprovals().some((pending) => {
    const own = session.recordedExecution(state, pending.callPath?.[0] ?? pending.toolCallId);
    return own?.error()?.code === 'APPROVAL_TIMEOUT';
  });
}

/**
 * The decisions a person took on the calls this replayed state waits for, as the recording holds
 * them: a blocked call was rejected (with the recorded reason), a call run with other arguments was
 * edited, any other ended call approved. A call the recording never ended (it was still waiting),
 * or ended by a stop or a timeout, gets none.
 */
function recordedDecisions(state: AgentState, session: ReplaySession): ApprovalInput[] {
  const decisions: ApprovalInput[] = [];
  for (const pending of state.pendingApprovals()) {
    const recorded = recordedCall(state, pending, session);
    const code = recorded?.error()?.code;
    if (!recorded || code === 'ABORTED' || code === 'APPROVAL_TIMEOUT') continue;
    const { toolCallId } = pending;
    const route = pending.callPath?.length ? { callPath: pending.callPath } : {};
    if (recorded.wasBlocked())
      decisions.push({ toolCallId, type: 'reject', reason: rejection(recorded), ...route });
    else if (firstDifference(recorded.toolCall().args, pending.args))
      decisions.push({ toolCallId, type: 'edit', args: recorded.toolCall().args, ...route });
    else decisions.push({ toolCallId, type: 'approve', ...route });
  }
  return decisions;
}

/**
 * The recorded execution of a call this replayed state waits for: the root's own, or (down its
 * `callPath`) one inside the recorded subagent of the caller's call, at the step its replay waits in.
 */
function recordedCall(
  state: AgentState,
  pending: PendingApproval,
  session: ReplaySession,
): ToolExecution | undefined {
  const path = pending.callPath ?? [];
  let replayed = state;
  let recorded = session.recordedExecution(state, path[0] ?? pending.toolCallId);
  for (const [i, callId] of path.entries()) {
    const child = recorded?.childState();
    const replayedChild = replayed.approval()?.children[callId];
    if (!child || !replayedChild) return undefined;
    const waitingStep = child.currentStep();
    const steps = waitingStep ? [...child.steps(), waitingStep] : child.steps();
    const id = path[i + 1] ?? pending.toolCallId;
    recorded = steps[replayedChild.stepCount()]?.toolExecutions().find((e) => e.toolCallId() === id);
    replayed = replayedChild;
  }
  return recorded;
}

/** The reason a person gave for a rejection, from the blocked call's message (`Rejected by a person: <reason>`). */
function rejection(execution: ToolExecution): string | undefined {
  const message = execution.error()?.message ?? '';
  const prefix = 'Rejected by a person';
  if (!message.startsWith(prefix)) return message || undefined;
  return message.slice(prefix.length).replace(/^: /, '') || undefined;
}

/** The hook stages a person's stop can interrupt, and the place of the run `recordUserStop` names for each. */
const STOPPABLE_STAGES = {
  beforeExecution: 'beforeExecution',
  beforeStep: 'beforeStep',
  afterStep: 'afterStep',
  onError: 'failing',
} as const;

/**
 * The hooks, each stage sending the person's stop again where the recording places it (the hook
 * is not called: the recorded run never had its answer; the stage's answer comes after the stop).
 * `session` gives the replay a stage runs in (the one the agent runs at the time).
 */
export function stoppableHooks(hooks: readonly Hook[], session: () => ReplaySession): Hook[] {
  return hooks.map((hook) => {
    const replayed = Object.create(hook) as Record<string, unknown>;
    for (const [stage, place] of Object.entries(STOPPABLE_STAGES)) {
      const run = hook[stage as keyof typeof STOPPABLE_STAGES];
      if (typeof run !== 'function') continue;
      // the stop is taken at once (the hook's answer, to a request the stop ended, is dropped)
      replayed[stage] = (state: AgentState, context: StageContext & ErrorContext) =>
        session().stopsHere(state, place) ? undefined : run.call(hook, state, context);
    }
    return replayed as Hook;
  });
}

/**
 * The messages steered into the recorded execution (marked `steered`), each one that joined the
 * conversation by the step it joined at: the first step whose input holds it (one that joined at
 * the first step, or was steered into an earlier execution of the session, stays in the state the
 * replay starts from, as if steered before), and those left unjoined in the steering section.
 */
export function recordedSteering(state: AgentState): RecordedSteering {
  const joined = new Map<number, Message[]>();
  const inputs = state.steps().map((step) => step.inputMessageList());
  const messages = state.messages();
  // the execution's own messages start with its first step's answer: a message steered before
  // (into an earlier execution of the session, or as this one started) is part of where it starts
  const executionId = state.executionId();
  const own = messages.findIndex((m) => m.metadata.execution_id === executionId);
  for (const [index, message] of messages.entries()) {
    if (message.metadata[STEERED] !== true || own === -1 || index < own) continue;
    // the first step sent it; else the step after the last whose input is known (a failed model call's is empty)
    const sentBy = inputs.findIndex((input) => holds(input, message));
    const stepNumber = sentBy >= 0 ? sentBy + 1 : inputs.findLastIndex((input) => input.size > 0) + 2;
    if (stepNumber > 1) joined.set(stepNumber, [...(joined.get(stepNumber) ?? []), message]);
  }
  const leftover = state.steeredMessages().filter((m) => m.metadata[STEERED] === true);
  return { joined, leftover };
}

/** Whether a step's input holds this message (the same, or an equal copy). */
function holds(input: Iterable<Message>, message: Message): boolean {
  for (const sent of input) if (sent === message || firstDifference(sent, message) === null) return true;
  return false;
}
