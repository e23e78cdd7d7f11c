/**
 * The agent machine's recurring pieces of chart, named: the seed's shouldStop? decision, a hook stage,
 * a checkpoint, an actor's error, the events accepted between executions. `agentLoop.ts` puts them
 * together.
 */

import { and } from 'xstate';
import { LoopTag, StateId } from './state-ids';
import type { HookStage } from './worker-protocol';

const { afterExecution: AFTER_EXECUTION, failing: FAILING, finalizing: FINALIZING, record: RECORD } = StateId;

/**
 * The seed's shouldStop? after a recorded step: afterExecution, or the next step. A step that failed
 * (its model call, or a hook after it) has closed its cycle and recorded; the run fails now.
 */
export { AFTER_EXECUTION, FAILING, FINALIZING, RECORD };

/** A transition's guard (a named one) and actions, without its target. */
interface Route {
  readonly guard?: string;
  readonly actions?: string | readonly (string | object)[];
}

const HAS_BEFORE_EXECUTION_HOOKS = { type: 'hasHooks', params: { stage: 'beforeExecution' } } as const;
const HAS_AFTER_EXECUTION_HOOKS = { type: 'hasHooks', params: { stage: 'afterExecution' } } as const;

/**
 * `hasHooks(afterExecution)` and then `guard`. Typed as the first: XState's `and` of names it
 * cannot check here would not type-check in the chart (`guard` is one of the chart's names).
 */
const withAfterExecutionHooks = (guard: string | undefined) =>
  guard === undefined
    ? HAS_AFTER_EXECUTION_HOOKS
    : (and([HAS_AFTER_EXECUTION_HOOKS, guard]) as unknown as typeof HAS_AFTER_EXECUTION_HOOKS);

/**
 * `route` to afterExecution: into that stage when the agent has afterExecution hooks, else straight
 * to finalizing. An agent without them never enters afterExecution (its `checkHooks` would only
 * pass on): one microstep less per run. `hasHooks` is checked first, so without hooks the
 * transition's own guard is evaluated once.
 */
export function toAfterExecution<const R extends Route>(route: R) {
  return [
    { ...route, guard: withAfterExecutionHooks(route.guard), target: AFTER_EXECUTION },
    { ...route, target: FINALIZING },
  ] as const;
}

/** `route` to `target`, by way of `toAfterExecution` when that is afterExecution. */
function routeTo<const R extends Route>(target: string, route: R) {
  return target === AFTER_EXECUTION ? toAfterExecution(route) : ([{ ...route, target }] as const);
}

// The pieces of `continueOrStop`'s choice, in the order it checks them.
const TO_FAILING = { guard: 'isFailed', target: FAILING } as const;
// a `stop` (the user's) is never overridden by a continuation request
const USER_STOP = toAfterExecution({ guard: 'userStopped' });
// a message steered in while the model gave its final answer: one more step, which sees it
const STEERED_AFTER_ANSWER = { guard: 'steeredAfterAnswer', target: StateId.beforeStep } as const;
const SHOULD_STOP = toAfterExecution({ guard: 'shouldStop' });
const NEXT_STEP = { target: StateId.beforeStep } as const;

/** After a step is recorded (and saved): fail, stop or take the next step. */
export const CONTINUE_OR_STOP = [
  TO_FAILING,
  ...USER_STOP,
  STEERED_AFTER_ANSWER,
  ...SHOULD_STOP,
  NEXT_STEP,
] as const;
/**
 * A step a run no one observes starts at the model call (`startsStepAtOnce`), as `beforeStep`
 * would start it, with its entry's actions and events: no beforeStep hooks run there; the guard
 * checked the budget. (A run no one listens to has the emit resolved to nothing: quiet-machine.ts.)
 */
const START_STEP_AT_ONCE = [
  { type: 'startStep', params: { budgetChecked: true } },
  'applySteering',
  'emitStepStarted',
] as const;

/** The outcome a run ends in at once (`concludesAtOnce`): the status `completeExecution` sets. */
const concludeAtOnce = (status: 'failed' | 'stopped' | 'completed') =>
  ({
    guard: { type: 'concludesAtOnce', params: { status } },
    target: StateId[status],
    actions: 'completeExecution',
  }) as const;
/**
 * CONTINUE_OR_STOP in `record`, without a session. A run no one observes (no inspector, no tracer, no actor
 * held by its caller: `LoopContext.observed`) skips the states where nothing would happen: it ends
 * in its outcome at once (`finalizing` only saves, with a session) unless afterExecution hooks run,
 * and starts its next step at the model call (`beforeStep` runs beforeStep hooks) with the budget
 * checked here (`startsStepAtOnce`), emitting what those states would (`onEvent` hears the same
 * events). An observed run takes every state, as the inspector shows it (#38).
 */
export const CONTINUE_OR_STOP_WITHOUT_SESSION = [
  TO_FAILING,
  ...USER_STOP,
  STEERED_AFTER_ANSWER,
  concludeAtOnce('failed'),
  concludeAtOnce('stopped'),
  concludeAtOnce('completed'),
  ...SHOULD_STOP,
  { guard: 'startsStepAtOnce', target: StateId.inference, actions: START_STEP_AT_ONCE },
  NEXT_STEP,
] as const;
/**
 * The step's model call and tools are done: its state is kept, and the afterStep hooks run if the
 * agent has any; without them the step is recorded at once (no pass through `afterStep`).
 */
export const TO_AFTER_STEP = [
  {
    guard: { type: 'hasHooks', params: { stage: 'afterStep' } },
    target: `${StateId.afterStep}.runHooks`,
    actions: 'assignState',
  },
  { target: RECORD, actions: 'assignState' },
] as const;
/**
 * A `stop` while the step has the model's answer (tools, awaitingApproval): settled calls keep
 * their results, the others are recorded as aborted, and the step closes its cycle through
 * afterStep and record, so every recorded step ran its afterStep hooks.
 */
export const STOP_IN_STEP = {
  target: StateId.afterStep,
  actions: ['keepSettledToolCalls', 'recordUserStop'],
} as const;
/**
 * An AgentStopError from the model call: no step to close (none recorded, no afterStep hooks; as
 * in the PHP loop, a step the error carries is not recorded).
 */
export const STOP_WITHOUT_STEP = toAfterExecution({
  guard: 'isStopRequest',
  actions: [{ type: 'recordStopRequest', params: { withoutStep: true } }, 'emitContinuationEvaluated'],
});
/** Drops (takes without a transition) a worker answer to another request than the one waited for. */
export const DROP_STALE = { guard: 'isStale' } as const;
/** The execution's outcome, from the status `completeExecution` set. */
export const CONCLUDE = [
  { guard: 'isFailed', target: StateId.failed },
  { guard: 'isStopped', target: StateId.stopped },
  { target: StateId.completed },
] as const;
/**
 * After beforeStep hooks: a budget used up ends the run, whatever the hooks asked; then as
 * `TO_INFERENCE`. (Without beforeStep hooks, nothing ran since `startStep` checked the budget.)
 */
export const AFTER_BEFORE_STEP_HOOKS = [
  ...toAfterExecution({ guard: 'overBudget', actions: 'stopOverBudget' }),
  ...toAfterExecution({ guard: 'stopSignalled' }),
  { target: StateId.inference },
] as const;
/** After beforeStep: a stop signal without a continuation request ends the run, else the model is called. */
export const TO_INFERENCE = [
  ...toAfterExecution({ guard: 'stopSignalled' }),
  { target: StateId.inference },
] as const;
/**
 * A hook stage: `runHooks` sends the stage to the `hooks` worker when the agent has hooks for it
 * and waits for its answer; otherwise `checkHooks` goes straight on (to `done`, or by the
 * `withoutHooks` transitions). A stage `enteredWithHooks` is entered only by an agent that has
 * hooks for it (the transitions to it go around it otherwise): its `checkHooks` goes to `runHooks`.
 */
export function hookStage(
  stage: HookStage,
  done: string,
  onError: readonly object[],
  {
    withoutHooks = routeTo(done, {}),
    enteredWithHooks = false,
  }: { withoutHooks?: readonly object[]; enteredWithHooks?: boolean } = {},
) {
  return {
    initial: 'checkHooks',
    states: {
      checkHooks: {
        always: enteredWithHooks
          ? [{ target: 'runHooks' }]
          : [{ guard: { type: 'hasHooks', params: { stage } }, target: 'runHooks' }, ...withoutHooks],
      },
      runHooks: {
        tags: [LoopTag.runningHooks],
        entry: { type: 'requestHooks', params: { stage } },
        // left before the answer (a stop): the hooks worker aborts the stage and drops its answer
        exit: 'cancelHooks',
        on: {
          'hooks.done': [DROP_STALE, ...routeTo(done, { actions: 'assignState' })],
          'hooks.error': [DROP_STALE, ...onError],
        },
      },
    },
  } as const;
}

/**
 * Persisting a checkpoint: with a session, `saving` asks the `checkpoint` worker to save and keeps
 * the new version; without one, `checkStore` goes straight on (to `done`, or by the `withoutStore`
 * transitions). A failed save fails the run:
 * during the steps through `failing` (onError hooks, afterExecution), at the end directly.
 */
export function persistStage(
  done: string,
  failed: string,
  {
    withoutStore = [{ target: done }],
    evaluate = true,
  }: { withoutStore?: readonly object[]; evaluate?: boolean } = {},
) {
  return {
    initial: 'checkStore',
    states: {
      checkStore: { always: [{ guard: 'hasSession', target: 'saving' }, ...withoutStore] },
      saving: checkpointStage(done, failed, { evaluate }),
    },
  } as const;
}

/**
 * A save by the `checkpoint` worker: the state is sent, the new version kept. A failed save fails
 * the run (evaluating the continuation, unless `failed` goes through `record`, which does). An
 * answer to an earlier request is dropped, as the other workers' are.
 *
 * `intent`: the step in flight with the unsafe calls about to start, saved only if it starts one
 * (the answer is then null, and the version stays); a subagent hands it to its caller
 * (`intentSave`), up to the root's session. Leaving before the answer (a stop) aborts the save's
 * wait for the tools it looks up (an MCP server may be starting) and drops its answer.
 */
export function checkpointStage(
  done: string,
  failed: string,
  { evaluate = true, intent = false }: { evaluate?: boolean; intent?: boolean } = {},
) {
  return {
    entry: { type: 'requestCheckpoint', params: { intent } },
    exit: intent ? (['cancelCheckpoint'] as const) : ([] as const),
    on: {
      'checkpoint.done': [DROP_STALE, { target: done, actions: 'assignVersion' }],
      'checkpoint.error': [
        DROP_STALE,
        {
          target: failed,
          actions: evaluate
            ? (['recordCheckpointFailure', 'emitContinuationEvaluated'] as const)
            : (['recordCheckpointFailure'] as const),
        },
      ],
    },
  } as const;
}

/**
 * `execute` runs the state as it is; `user.message` appends the message first. An agent without
 * beforeExecution hooks starts at the first step: it never enters beforeExecution (its `checkHooks`
 * would only pass on), one microstep less per run.
 */
export function acceptsWork() {
  return {
    execute: toFirstStep([], ['startExecution']),
    'user.message': [
      { guard: 'lacksUserText', actions: 'refuseUserMessage' },
      ...toFirstStep(['appendUserMessage'], ['appendUserMessage', 'startExecution']),
    ],
  } as const;
}

/** `before`: the actions before the execution starts; `actions`: those and `startExecution`. */
function toFirstStep<const B extends readonly string[], const A extends readonly string[]>(
  before: B,
  actions: A,
) {
  // the first step starts in the same update as the execution (`stepAtOnce`), as `beforeStep` would
  const atOnce = [
    ...before,
    { type: 'startExecution', params: { stepAtOnce: true } },
    'applySteering',
  ] as const;
  return [
    { actions, guard: HAS_BEFORE_EXECUTION_HOOKS, target: StateId.inProgress },
    { actions: atOnce, guard: 'startsRunAtOnce', target: StateId.inference },
    { actions, target: StateId.step },
  ] as const;
}

/**
 * In `pending`, a state saved while awaiting approval continues there, with the decisions it
 * carries; one saved after the step that ended its execution goes to afterExecution.
 */
export function acceptsWorkOrDecisions() {
  return {
    execute: [
      {
        guard: 'awaitsApproval',
        target: StateId.awaitingApproval,
        actions: 'startExecution',
      },
      ...toAfterExecution({ guard: 'endedWhenSaved', actions: 'startExecution' }),
      ...acceptsWork().execute,
    ],
    'user.message': [{ guard: 'awaitsApproval', actions: 'refuseEvent' }, ...acceptsWork()['user.message']],
  } as const;
}

/** A decision on a pending call is recorded; one on any other id is refused, and changes nothing. */
export function decisionTransitions() {
  return [
    { guard: 'isPendingCall', actions: ['recordDecision', 'emitApprovalDecided'] },
    { actions: 'refuseEvent' },
  ] as const;
}

/**
 * An actor's error. A stop exception (AgentStopError, from any hook) records StopRequested and goes
 * on to `stopTarget` (null: the caller routes stops itself). Any other error is the run's failure,
 * recorded (on a new step when `inStep`: the model call failed) before going to `failTarget`
 * (`failing` by default). A failure that does not pass through `record`, which evaluates the
 * continuation of every step, is evaluated here (seed 004: recording an error evaluates the
 * continuation).
 */
export function onActorError(
  stopTarget: string | null,
  { failTarget = FAILING, inStep = false, evaluate = true, keepSettled = false }: FailureRoute = {},
) {
  const record = { type: 'recordFailure', params: { inStep } } as const;
  type Action = 'keepSettledToolCalls' | 'recordStopRequest' | 'emitContinuationEvaluated' | typeof record;
  const actions = (...list: Action[]): readonly Action[] =>
    keepSettled ? ['keepSettledToolCalls', ...list] : list;
  const fail = routeTo(failTarget, {
    actions: evaluate ? actions(record, 'emitContinuationEvaluated') : actions(record),
  });
  if (stopTarget === null) return fail;
  return [
    ...routeTo(stopTarget, { guard: 'isStopRequest', actions: actions('recordStopRequest') }),
    ...fail,
  ] as const;
}

interface FailureRoute {
  readonly failTarget?: string;
  readonly inStep?: boolean;
  readonly evaluate?: boolean;
  /** The tool calls that settled before the error are recorded first (`keepSettledToolCalls`). */
  readonly keepSettled?: boolean;
}
