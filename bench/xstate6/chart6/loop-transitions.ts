/**
 * XState 6 port of machines/loop-transitions.ts: the same pieces of chart, as lists of branches
 * (when.ts turns a list into the one transition function XState 6 takes).
 */
import type { CheckpointInput, LoopContext } from '../repo/machines/loop-context';
import { LoopTag, StateId } from '../repo/machines/state-ids';
import type { HookStage } from '../repo/machines/worker-protocol';
import { type Branch, run, when } from './when';

const { afterExecution: AFTER_EXECUTION, failing: FAILING, finalizing: FINALIZING, record: RECORD } = StateId;

export { AFTER_EXECUTION, FAILING, FINALIZING, RECORD };

export const DECIDE: readonly Branch[] = [
  { guard: 'isFailed', target: FAILING },
  { guard: 'userStopped', target: AFTER_EXECUTION },
  { guard: 'steeredAfterAnswer', target: StateId.beforeStep },
  { guard: 'shouldStop', target: AFTER_EXECUTION },
  { target: StateId.beforeStep },
];
export const TO_AFTER_STEP: readonly Branch[] = [
  {
    guard: { type: 'hasHooks', params: { stage: 'afterStep' } },
    target: `${StateId.afterStep}.runHooks`,
    actions: 'assignState',
  },
  { target: RECORD, actions: 'assignState' },
];
export const STOP_IN_STEP = {
  target: StateId.afterStep,
  actions: ['keepSettledToolCalls', 'recordUserStop'],
} as const satisfies Branch;
export const STOP_WITHOUT_STEP: Branch = {
  guard: 'isStopRequest',
  target: AFTER_EXECUTION,
  actions: [{ type: 'recordStopRequest', params: { withoutStep: true } }, 'emitContinuationEvaluated'],
};
export const DROP_STALE: Branch = { guard: 'isStale' };
export const CONCLUDE: readonly Branch[] = [
  { guard: 'isFailed', target: StateId.failed },
  { guard: 'isStopped', target: StateId.stopped },
  { target: StateId.completed },
];
export const AFTER_BEFORE_STEP_HOOKS: readonly Branch[] = [
  { guard: 'overBudget', target: AFTER_EXECUTION, actions: 'stopOverBudget' },
  { guard: 'stopSignalled', target: AFTER_EXECUTION },
  { target: StateId.inference },
];
export const TO_INFERENCE: readonly Branch[] = [
  { guard: 'stopSignalled', target: AFTER_EXECUTION },
  { target: StateId.inference },
];

export function hookStage(
  stage: HookStage,
  done: string,
  onError: readonly Branch[],
  { withoutHooks = [{ target: done }] }: { withoutHooks?: readonly Branch[] } = {},
) {
  return {
    initial: 'checkHooks',
    states: {
      checkHooks: {
        always: when({ guard: { type: 'hasHooks', params: { stage } }, target: 'runHooks' }, ...withoutHooks),
      },
      runHooks: {
        tags: [LoopTag.runningHooks],
        entry: run({ type: 'requestHooks', params: { stage } }),
        exit: run('cancelHooks'),
        on: {
          'hooks.done': when(DROP_STALE, { target: done, actions: 'assignState' }),
          'hooks.error': when(DROP_STALE, ...onError),
        },
      },
    },
  };
}

export function persistStage(
  done: string,
  failed: string,
  {
    withoutStore = [{ target: done }],
    evaluate = true,
  }: { withoutStore?: readonly Branch[]; evaluate?: boolean } = {},
) {
  return {
    initial: 'checkStore',
    states: {
      checkStore: { always: when({ guard: 'hasSession', target: 'saving' }, ...withoutStore) },
      saving: { invoke: checkpointInvoke(done, failed, evaluate) },
    },
  };
}

export function checkpointInvoke(done: string, failed: string, evaluate = true) {
  return {
    id: 'checkpoint',
    src: 'checkpoint' as const,
    input: ({ context }: { context: LoopContext }): CheckpointInput =>
      Object.defineProperty({ session: context.session! }, 'state', {
        value: context.state,
      }) as CheckpointInput,
    onDone: when({ target: done, actions: 'assignVersion' }),
    onError: when({
      target: failed,
      actions: evaluate
        ? ['recordCheckpointFailure', 'emitContinuationEvaluated']
        : ['recordCheckpointFailure'],
    }),
  };
}

export function intentInvoke(done: string, failed: string, evaluate = true) {
  return { ...checkpointInvoke(done, failed, evaluate), src: 'intentCheckpoint' as const };
}

const EXECUTE: Branch = { target: StateId.inProgress, actions: 'startExecution' };
const USER_MESSAGE: Branch = { target: StateId.inProgress, actions: ['appendUserMessage', 'startExecution'] };

export function acceptsWork() {
  return { execute: when(EXECUTE), 'user.message': when(USER_MESSAGE) };
}

export function acceptsWorkOrDecisions() {
  return {
    execute: when(
      { guard: 'awaitsApproval', target: StateId.awaitingApproval, actions: 'startExecution' },
      { guard: 'endedWhenSaved', target: AFTER_EXECUTION, actions: 'startExecution' },
      EXECUTE,
    ),
    'user.message': when({ guard: 'awaitsApproval', actions: 'refuseEvent' }, USER_MESSAGE),
  };
}

export function decisionTransitions() {
  return when(
    { guard: 'isPendingCall', actions: ['recordDecision', 'emitApprovalDecided'] },
    { actions: 'refuseEvent' },
  );
}

export function onActorError(
  stopTarget: string | null,
  { failTarget = FAILING, inStep = false, evaluate = true, keepSettled = false }: FailureRoute = {},
): readonly Branch[] {
  const record = { type: 'recordFailure', params: { inStep } } as const;
  const actions = (...list: Branch['actions'][]) =>
    (keepSettled ? ['keepSettledToolCalls', ...list] : list) as Branch['actions'];
  const fail: Branch = {
    target: failTarget,
    actions: evaluate ? actions(record, 'emitContinuationEvaluated') : actions(record),
  };
  if (stopTarget === null) return [fail];
  return [{ guard: 'isStopRequest', target: stopTarget, actions: actions('recordStopRequest') }, fail];
}

interface FailureRoute {
  readonly failTarget?: string;
  readonly inStep?: boolean;
  readonly evaluate?: boolean;
  readonly keepSettled?: boolean;
}
