/**
 * The agent machine's recurring pieces of chart, named: the seed's shouldStop? decision, a hook stage,
 * a checkpoint, an actor's error, the events accepted between executions. `agentLoop.ts` puts them
 * together.
 */

import type { CheckpointInput, LoopContext } from './loop-context';
import { LoopTag, StateId } from './state-ids';
import type { HookStage } from './worker-protocol';

const { afterExecution: AFTER_EXECUTION, failing: FAILING, finalizing: FINALIZING, record: RECORD } = StateId;

/**
 * The seed's shouldStop? after a recorded step: afterExecution, or the next step. A step that failed
 * (its model call, or a hook after it) has closed its cycle and recorded; the run fails now.
 */
export { AFTER_EXECUTION, FAILING, FINALIZING, RECORD };

export const DECIDE = [
  { guard: 'isFailed', target: FAILING },
  { guard: 'shouldStop', target: AFTER_EXECUTION },
  { target: StateId.beforeStep },
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
/** Drops (takes without a transition) a worker answer to another request than the one waited for. */
export const DROP_STALE = { guard: 'isStale' } as const;
/** The execution's outcome, from the status `completeExecution` set. */
export const CONCLUDE = [
  { guard: 'isFailed', target: StateId.failed },
  { guard: 'isStopped', target: StateId.stopped },
  { target: StateId.completed },
] as const;
/** After beforeStep: a stop signal without a continuation request ends the run, else the model is called. */
export const TO_INFERENCE = [
  { guard: 'stopSignalled', target: AFTER_EXECUTION },
  { target: StateId.inference },
] as const;
/**
 * A hook stage: `runHooks` sends the stage to the `hooks` worker when the agent has hooks for it
 * and waits for its answer; otherwise `checkHooks` goes straight on (to `done`, or by the
 * `withoutHooks` transitions).
 */
export function hookStage(
  stage: HookStage,
  done: string,
  onError: readonly object[],
  { withoutHooks = [{ target: done }] }: { withoutHooks?: readonly object[] } = {},
) {
  return {
    initial: 'checkHooks',
    states: {
      checkHooks: {
        always: [{ guard: { type: 'hasHooks', params: { stage } }, target: 'runHooks' }, ...withoutHooks],
      },
      runHooks: {
        tags: [LoopTag.runningHooks],
        entry: { type: 'requestHooks', params: { stage } },
        // left before the answer (a stop): the hooks worker aborts the stage and drops its answer
        exit: 'cancelHooks',
        on: {
          'hooks.done': [DROP_STALE, { target: done, actions: 'assignState' }],
          'hooks.error': [DROP_STALE, ...onError],
        },
      },
    },
  } as const;
}

/**
 * Persisting a checkpoint: with a session, `saving` invokes the `checkpoint` actor (the store's save) and
 * keeps the new version; without one, `checkStore` goes straight on (to `done`, or by the
 * `withoutStore` transitions). A failed save fails the run:
 * during the steps through `failing` (onError hooks, afterExecution), at the end directly.
 */
export function persistStage(
  done: string,
  failed: string,
  { withoutStore = [{ target: done }] }: { withoutStore?: readonly object[] } = {},
) {
  return {
    initial: 'checkStore',
    states: {
      checkStore: { always: [{ guard: 'hasSession', target: 'saving' }, ...withoutStore] },
      saving: { invoke: checkpointInvoke(done, failed) },
    },
  } as const;
}

/** The `checkpoint` actor: saves the state, keeps the new version; a failed save fails the run. */
export function checkpointInvoke(done: string, failed: string) {
  return {
    id: 'checkpoint',
    src: 'checkpoint',
    // The state is not enumerable: an inspector showing the actor's input sees the session only.
    input: ({ context }: { context: LoopContext }): CheckpointInput =>
      Object.defineProperty({ session: context.session! }, 'state', {
        value: context.state,
      }) as CheckpointInput,
    onDone: { target: done, actions: 'assignVersion' },
    onError: { target: failed, actions: ['recordCheckpointFailure', 'emitContinuationEvaluated'] },
  } as const;
}

/**
 * The intent save (`intentCheckpoint`, a checkpoint as the others are, under the same actor id): the
 * step in flight with the unsafe calls about to start; its output is the new version (null when an
 * MCP tool turned out not unsafe and nothing was saved). A failed save fails the run before any starts.
 */
export function intentInvoke(done: string, failed: string) {
  return { ...checkpointInvoke(done, failed), src: 'intentCheckpoint' } as const;
}

/** `execute` runs the state as it is; `user.message` appends the message first. */
export function acceptsWork() {
  return {
    execute: { target: StateId.inProgress, actions: 'startExecution' },
    'user.message': { target: StateId.inProgress, actions: ['appendUserMessage', 'startExecution'] },
  } as const;
}

/** In `pending`, a state saved while awaiting approval continues there, with the decisions it carries. */
export function acceptsWorkOrDecisions() {
  return {
    execute: [
      {
        guard: 'awaitsApproval',
        target: StateId.awaitingApproval,
        actions: 'startExecution',
      },
      acceptsWork().execute,
    ],
    'user.message': [{ guard: 'awaitsApproval', actions: 'refuseEvent' }, acceptsWork()['user.message']],
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
 * on to `stopTarget`. Any other error is the run's failure, recorded (on a new step when `inStep`:
 * the model call failed) before going to `failTarget` (`failing` by default). A failure that does not
 * pass through `record`, which evaluates the continuation of every step, is evaluated here (seed 004:
 * recording an error evaluates the continuation).
 */
export function onActorError(
  stopTarget: string,
  { failTarget = FAILING, inStep = false, evaluate = true }: FailureRoute = {},
) {
  const record = { type: 'recordFailure', params: { inStep } } as const;
  return [
    { guard: 'isStopRequest', target: stopTarget, actions: 'recordStopRequest' },
    {
      target: failTarget,
      actions: evaluate ? ([record, 'emitContinuationEvaluated'] as const) : ([record] as const),
    },
  ] as const;
}

interface FailureRoute {
  readonly failTarget?: string;
  readonly inStep?: boolean;
  readonly evaluate?: boolean;
}
