/** The graph side of the agent test model: the events possible in each situation, and how situations are told apart. */
import { type LoopContext, LoopTag } from '../../machines/agentLoop';
import { consecutiveErrorSteps } from '../hooks/error-policy';
import type { AgentState } from '../state/agent-state';
import { AgentStep } from '../state/agent-step';
import { AgentStopError } from '../state/agent-stop-error';
import type { HookStage } from '../state/hook-stage';
import type { GraphPath } from './graph';
import { hookBehaviour, modelAnswer, toolOutcome } from './puppets';
import {
  APPROVAL_TIMEOUT_EVENT,
  AUTO,
  hookStageOf,
  type ModelEvent,
  PROBE_APPROVER,
  PROBE_GATE,
  PROBE_SUBAGENT,
  PROBE_TOOL,
  probeError,
  type Snapshot,
  STALE,
  STALE_ERROR,
} from './test-model-vocabulary';

/** Whether messages were steered into the run and have not joined the conversation yet. */
const steered = (context: LoopContext) =>
  context.steering.length + context.state.steeredMessages().length > 0;
const STEER: ModelEvent = { type: 'steer', message: 'steered', behaviour: 'message' };
const STEER_EMPTY: ModelEvent = { type: 'steer', message: '', behaviour: 'empty' };
const STEER_OUTSIDE: ModelEvent = { type: 'steer', message: 'no run', behaviour: 'outside' };
/** A `user.message` without text (untyped code): refused with INVALID_ARGUMENT, the agent unchanged. */
const MESSAGE_WITHOUT_TEXT: ModelEvent = { type: 'user.message', behaviour: 'no text' };

/** The workers answer with events of their own (`<id>.done`, `<id>.error`); other actors end as actors do. */
const WORKERS = new Set(['hooks', 'driver', 'toolExecutor', 'checkpoint']);
const answerType = (actor: string, kind: 'done' | 'error') =>
  WORKERS.has(actor) ? `${actor}.${kind}` : `xstate.${kind}.actor.${actor}`;
/** The actor whose answer (done or error) an event type is, or null (`answerType` read back). */
export function answeringActor(type: string): string | null {
  const match = /^xstate\.(?:done|error)\.actor\.(\w+)$/.exec(type) ?? /^(\w+)\.(?:done|error)$/.exec(type);
  const actor = match?.[1];
  return actor && (WORKERS.has(actor) || match[0].startsWith('xstate.')) ? actor : null;
}
const done = (actor: string, output: AgentState, behaviour: string): ModelEvent => ({
  type: answerType(actor, 'done'),
  output,
  behaviour,
  toJSON: () => ({ type: answerType(actor, 'done'), behaviour }),
});
const failed = (actor: string, error: unknown, behaviour: string): ModelEvent => ({
  type: answerType(actor, 'error'),
  error,
  behaviour,
  toJSON: () => ({ type: answerType(actor, 'error'), behaviour }),
});

/**
 * Answers to an earlier request, on their way when a stop (or a new execution) came: their token
 * is not the one waited for, and the waiting state drops them.
 */
function staleAnswers(worker: string, state: AgentState): ModelEvent[] {
  return [
    { ...done(worker, state, STALE), token: 'an earlier request' },
    { ...failed(worker, new Error('late failure'), STALE_ERROR), token: 'an earlier request' },
  ];
}

/** The events possible in a situation, with the outputs the puppets will produce. */
export function eventsFor(
  snapshot: Snapshot,
  options: {
    withSubagent: boolean;
    executions: number;
    probeHooks: boolean | readonly HookStage[];
    approvals: boolean;
    timeLimit: boolean;
  },
): ModelEvent[] {
  const { state, budget } = snapshot.context as LoopContext;
  const value = JSON.stringify(snapshot.value);
  if (snapshot.matches('pending') || snapshot.hasTag(LoopTag.outcome)) {
    if (!snapshot.matches('pending') && state.executionCount() >= options.executions) return [];
    const work = [{ type: 'execute' }, { type: 'user.message', text: 'again' }];
    // no run to steer: refused (NO_RUN_IN_PROGRESS); probed before the first execution only. A
    // message without text is refused there and in the outcomes (not in a resumed state's pending)
    if (state.executionCount() === 0) return [...work, STEER_OUTSIDE, MESSAGE_WITHOUT_TEXT];
    return snapshot.matches('pending') ? work : [...work, MESSAGE_WITHOUT_TEXT];
  }
  const stage = Object.keys(hookStageOf).find((s) => value.includes(`"${s}"`)) as string;
  const hookStage = hookStageOf[stage] as HookStage;
  const probed = options.probeHooks === true || (options.probeHooks || []).includes(hookStage);
  if (snapshot.hasTag(LoopTag.runningHooks) && !probed) {
    // Only your own hooks run here: they answer by themselves.
    return [done('hooks', state, AUTO)];
  }
  const events: ModelEvent[] = [{ type: 'stop' }];
  if (snapshot.hasTag(LoopTag.runningHooks)) {
    events.push(done('hooks', hookBehaviour(state, 'pass'), 'pass'));
    // a continuation over a budget's signal is refused: the budget is checked again after beforeStep
    if (hookStage === 'afterStep' || hookStage === 'beforeStep') {
      events.push(done('hooks', hookBehaviour(state, 'continue'), 'continue'));
    }
    events.push(failed('hooks', new Error('probe hook failed'), 'throw'));
    // every hook stage takes AgentStopError as a stop, onError and afterExecution included
    events.push(failed('hooks', new AgentStopError('probe hook stops'), 'stop'));
    events.push(...staleAnswers('hooks', state));
  } else if (snapshot.matches({ inProgress: { step: 'inference' } })) {
    const answers = [
      'toolCall',
      'final',
      ...(options.withSubagent ? ['subagent'] : []),
      ...(options.approvals ? ['approvalCall'] : []),
      // the approver takes two steps (its gate call, its answer): called only with two steps left
      ...(options.withSubagent &&
      options.approvals &&
      (budget.maxSteps === null || budget.maxSteps - state.stepCount() >= 2)
        ? ['nestedApproval']
        : []),
    ];
    for (const answer of answers) events.push(done('driver', modelAnswer(state, answer), answer));
    // a steer while the model answers joins the next step (one more after a final answer)
    // probed in the first step of the first execution, without probe hooks (each probe doubles
    // the rest of the step's situations)
    if (
      options.probeHooks !== true &&
      state.executionCount() === 1 &&
      state.stepCount() === 0 &&
      !steered(snapshot.context as LoopContext)
    )
      events.push(STEER, STEER_EMPTY);
    events.push(failed('driver', new Error('model unavailable'), 'error'));
    events.push(failed('driver', new AgentStopError('model stops'), 'stop'));
    events.push(...staleAnswers('driver', state));
  } else if (snapshot.hasTag(LoopTag.awaitingDecisions)) {
    const pending = state.pendingApprovals()[0]?.toolCallId ?? 'none';
    events.push(
      { type: 'approve', toolCallId: pending },
      { type: 'reject', toolCallId: pending, reason: 'no' },
    );
    events.push({ type: 'edit', toolCallId: pending, input: { n: 99 } });
    for (const type of ['approve', 'reject', 'edit'])
      events.push({ type, toolCallId: 'not-pending', input: { n: 1 } });
    events.push({ type: 'user.message', text: 'meanwhile' }, { type: 'execute' });
    if (options.timeLimit) events.push({ type: APPROVAL_TIMEOUT_EVENT, behaviour: 'timeout' });
  } else if (value.includes('"saving"') || value.includes('"persist"')) {
    events.push(done('checkpoint', state, 'saved'));
    // new work while a run is in progress is refused (RUN_IN_PROGRESS); probed where a step is saved
    if (value.includes('"persist"'))
      events.push({ type: 'user.message', text: 'meanwhile' }, { type: 'execute' });
    events.push(failed('checkpoint', new Error('probe store failed'), 'fail'));
    events.push(...staleAnswers('checkpoint', state));
  } else if (snapshot.matches({ inProgress: { step: 'tools' } })) {
    const calls = state.currentStep()?.requestedToolCalls() ?? [];
    if (calls.some((c) => c.name === PROBE_SUBAGENT || c.name === PROBE_GATE || c.name === PROBE_APPROVER)) {
      // The helper and the gate answer at once: nothing else can happen while they run.
      return [done('toolExecutor', toolOutcome(state, 'ok'), AUTO)];
    } else {
      events.push(done('toolExecutor', toolOutcome(state, 'ok'), 'ok'));
      events.push(done('toolExecutor', toolOutcome(state, 'fail'), 'fail'));
      events.push(failed('toolExecutor', stopWithState(toolOutcome(state, 'fail')), 'stop'));
      if (options.probeHooks === true)
        events.push(failed('toolExecutor', new Error('probe tool hook failed'), 'crash'));
      events.push(...staleAnswers('toolExecutor', state));
    }
  }
  return events;
}

function stopWithState(state: AgentState): AgentStopError {
  const error = new AgentStopError('probe tool stops', {}, PROBE_TOOL);
  error.state = state;
  return error;
}

/** A situation, abstracted so the graph is finite: what guards and invariants depend on. */
export function abstractState(snapshot: Snapshot): string {
  const { state, error } = snapshot.context as LoopContext;
  const step = state.currentStep();
  return JSON.stringify({
    value: snapshot.value,
    executions: state.executionCount(),
    status: state.status(),
    steps: state.stepCount(),
    signals: [
      ...new Set(
        state
          .execution()
          ?.continuation()
          .stopSignals.map((s) => s.reason) ?? [],
      ),
    ].sort(),
    continued: state.execution()?.continuation().isContinuationRequested() ?? false,
    // error steps at the end of the recorded steps, whatever the step in flight is
    errorStreak: consecutiveErrorSteps(state.withCurrentStep(AgentStep.of().withError(probeError))) - 1,
    current: step
      ? [step.stepType(), step.requestedToolCalls().map((c) => c.name), step.toolExecutions().length]
      : null,
    // what `decide` reads once the step is recorded: the last step's calls and its continuation
    last: lastStepOf(state),
    approval: approvalOf(state),
    failing: error !== null,
    steered: steered(snapshot.context as LoopContext),
  });
}

function approvalOf(state: AgentState) {
  const approval = state.approval();
  if (!approval) return null;
  return [
    state.pendingApprovals().length,
    Object.values(approval.decisions)
      .map((d) => d.type)
      .sort(),
  ];
}

function lastStepOf(state: AgentState) {
  const last = state.lastStepExecution();
  if (!last) return null;
  return [last.step().stepType(), last.step().hasToolCalls(), last.continuation().isContinuationRequested()];
}

export function describe(path: GraphPath<Snapshot, ModelEvent>): string {
  const events = path.steps
    .map((s) => s.event)
    .filter((e) => e.type !== 'xstate.init')
    .map((e) => {
      const actor = answeringActor(e.type);
      return actor ? `${actor}:${e.behaviour}` : e.type;
    });
  return `${JSON.stringify(path.state.value)} via ${events.join(' > ') || '(start)'}`;
}
