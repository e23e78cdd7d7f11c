/**
 * The agent loop as a statechart: the ExecutionStatus lifecycle and the step cycle of one agent.
 * Its context holds the immutable AgentState. The actors it invokes are named in `loop-setup.ts`
 * and provided by the runtime (`createAgent`) with `agentLoop.provide({ actors })`: four workers
 * that take requests (`worker-protocol.ts`), `hooks` and `checkpoint` (every save) for the
 * execution, `driver` and `toolExecutor` for the step cycle, each made with a `WorkerInput`
 * (`loop-context.ts`). What only the runtime can do (the workers, `keepSettledToolCalls`,
 * `spawnSubagent`, `startsUnsafeCalls`) throws NotProvidedError in the chart alone
 * (`not-provided.ts`). Guards and actions are named in
 * `loop-setup.ts`, `loop-actions.ts` and `loop-emits.ts`; recurring pieces of chart in
 * `loop-transitions.ts`; state ids in `state-ids.ts`.
 *
 * The map: every state of the chart, of `inProgress` and of `step`, in parentheses those a run
 * may go around (tests/loop/chart-header.test.ts compares it with the chart).
 *
 * pending -> inProgress [
 *   (beforeExecution) -> step [ beforeStep -> (checkSignals) -> inference -> (awaitingApproval)
 *     -> (intent) -> tools -> (afterStep) -> record -> (persist) -> continueOrStop ]
 *   -> (failing) -> (afterExecution) -> (failingAfterExecution) -> finalizing -> concluding
 * ] -> completed | stopped | failed
 */

import { and } from 'xstate';
import { ExecutionBudget } from '../src/state/execution-budget';
import { workerInput } from './loop-context';
import { loopImplementations } from './loop-emits';
import {
  AFTER_BEFORE_STEP_HOOKS,
  AFTER_EXECUTION,
  acceptsWork,
  acceptsWorkOrDecisions,
  CONCLUDE,
  CONTINUE_OR_STOP,
  CONTINUE_OR_STOP_WITHOUT_SESSION,
  checkpointStage,
  DROP_STALE,
  decisionTransitions,
  FAILING,
  FINALIZING,
  hookStage,
  onActorError,
  persistStage,
  RECORD,
  STOP_IN_STEP,
  STOP_WITHOUT_STEP,
  TO_AFTER_STEP,
  TO_INFERENCE,
  toAfterExecution,
} from './loop-transitions';
import { LoopTag, StateId } from './state-ids';

export const agentLoop = loopImplementations.createMachine({
  id: 'agent',
  context: ({ input }) => ({
    state: input.state,
    error: null,
    hookStages: input.hookStages ?? [],
    budget: input.budget ?? ExecutionBudget.unlimited(),
    session: input.session ?? null,
    reports: input.reports ?? true,
    observed: input.observed ?? input.reports ?? true,
    checkStep: input.checkStep ?? null,
    toolExecutorStarted: false,
    steering: [],
    intentSave: input.intentSave ?? null,
    ledgerScopes: input.ledgerScopes ?? [],
  }),
  initial: 'pending',
  on: {
    'subagent.release': { actions: 'releaseSubagent' },
    'session.saved': { actions: 'assignSavedVersion' },
    // no run to steer: refused with NO_RUN_IN_PROGRESS (a message starts a run as `user.message`)
    steer: { actions: 'refuseSteer' },
  },
  states: {
    pending: { on: acceptsWorkOrDecisions() },
    inProgress: {
      initial: 'beforeExecution',
      entry: ['emitExecutionStarted', 'startHooksWorker', 'startCheckpointWorker'],
      exit: ['stopHooksWorker', 'stopCheckpointWorker'],
      on: {
        stop: toAfterExecution({ actions: ['keepSettledToolCalls', 'recordUserStop'] }),
        // a run in progress takes no new work: refused with RUN_IN_PROGRESS (awaitingApproval: APPROVAL_PENDING)
        execute: { actions: 'refuseWhileRunning' },
        'user.message': { actions: 'refuseWhileRunning' },
        // kept for the next step boundary, in every state of the run (a model call, a tool, an
        // approval in flight); a steer that carries no message is refused
        steer: [
          { guard: 'carriesMessage', actions: 'keepSteer' },
          { actions: { type: 'refuseSteer', params: { running: true } } },
        ],
        'tool.started': { actions: 'forwardReport' },
        'tool.finished': { actions: 'forwardReport' },
        'text.delta': { actions: 'forwardReport' },
        'context.compacted': { actions: 'forwardReport' },
      },
      states: {
        // entered only by an agent with beforeExecution hooks: `execute` goes to `step` otherwise
        beforeExecution: hookStage('beforeExecution', StateId.step, onActorError(AFTER_EXECUTION), {
          enteredWithHooks: true,
        }),
        step: {
          initial: 'beforeStep',
          // The step's two workers live as long as the step cycle (made once per execution, not per
          // step); `inference` and `tools` send them the state and wait for their answer events. The
          // tool executor starts at the cycle's first tool call: a run that calls no tool never makes it.
          invoke: { id: 'driver', src: 'driver', input: workerInput },
          exit: 'stopToolExecutor',
          states: {
            beforeStep: {
              // steered messages join after `startStep`, unless it found the budget used up (no model call)
              entry: ['startStep', 'applySteering', 'emitStepStarted'],
              ...hookStage('beforeStep', StateId.checkSignals, onActorError(AFTER_EXECUTION), {
                withoutHooks: TO_INFERENCE,
              }),
            },
            // after beforeStep hooks changed the state: the budget again, then the signals (without
            // hooks, `checkHooks` decides on the signals)
            checkSignals: { always: AFTER_BEFORE_STEP_HOOKS },
            inference: {
              entry: 'requestInference',
              on: {
                'driver.done': [
                  DROP_STALE,
                  { guard: 'asksApproval', target: 'awaitingApproval', actions: 'assignState' },
                  // with a session (a subagent: its caller's), through `intent` (saved first if it starts unsafe calls)
                  {
                    guard: and(['hasToolCalls', 'hasSaveTarget']),
                    target: 'intent',
                    actions: 'assignStateForTools',
                  },
                  { guard: 'hasToolCalls', target: 'tools', actions: 'assignStateForTools' },
                  ...TO_AFTER_STEP,
                ],
                // a failed model call still closes its step's cycle: afterStep hooks, record, then
                // `failing`; a stop before the model answered has no step to close
                'driver.error': [
                  DROP_STALE,
                  ...STOP_WITHOUT_STEP,
                  ...onActorError(null, { failTarget: 'afterStep', inStep: true, evaluate: false }),
                ],
              },
            },
            awaitingApproval: {
              initial: 'checkStore',
              // the waiting step closes its cycle (afterStep hooks, record) before the run ends
              on: { stop: STOP_IN_STEP },
              states: {
                ...persistStage(StateId.waitingForDecisions, StateId.afterStep, { evaluate: false }).states,
                waiting: {
                  // announced once saved: a process that dies while showing it loses nothing
                  entry: 'emitApprovalRequested',
                  tags: [LoopTag.awaitingDecisions],
                  always: [
                    {
                      guard: 'timeBudgetExhausted',
                      target: StateId.afterStep,
                      actions: 'recordApprovalTimeout',
                    },
                    {
                      guard: and(['allDecided', 'hasSaveTarget']),
                      target: StateId.intent,
                      actions: 'startToolExecutor',
                    },
                    { guard: 'allDecided', target: StateId.tools, actions: 'startToolExecutor' },
                  ],
                  after: {
                    approvalTimeout: {
                      guard: 'hasTimeLimit',
                      target: StateId.afterStep,
                      actions: 'recordApprovalTimeout',
                    },
                  },
                  on: {
                    approve: decisionTransitions(),
                    reject: decisionTransitions(),
                    edit: decisionTransitions(),
                    execute: { actions: 'refuseEvent' },
                    'user.message': { actions: 'refuseEvent' },
                  },
                },
              },
            },
            // With a session, a step about to start unsafe calls is saved first (its intent): a
            // crash in them leaves them waiting for a person, never run twice unasked.
            // A failed save or a stop closes the step's cycle (afterStep hooks, record), as in `tools`.
            intent: {
              initial: 'check',
              on: { stop: STOP_IN_STEP },
              states: {
                check: {
                  always: [{ guard: 'startsUnsafeCalls', target: 'saving' }, { target: StateId.tools }],
                },
                saving: checkpointStage(StateId.tools, StateId.afterStep, { evaluate: false, intent: true }),
              },
            },
            tools: {
              entry: 'requestTools',
              on: {
                // the calls in flight are aborted; the step closes its cycle (afterStep hooks, record)
                stop: { ...STOP_IN_STEP, actions: ['cancelTools', ...STOP_IN_STEP.actions] },
                'toolExecutor.done': [
                  DROP_STALE,
                  // a subagent call's child waits for decisions: the step waits with it
                  { guard: 'asksApproval', target: 'awaitingApproval', actions: 'assignState' },
                  ...TO_AFTER_STEP,
                ],
                // the calls that settled keep their results (a tool hook threw after they ran)
                'toolExecutor.error': [
                  DROP_STALE,
                  ...onActorError('afterStep', {
                    failTarget: 'afterStep',
                    evaluate: false,
                    keepSettled: true,
                  }),
                ],
                'subagent.spawn': { actions: 'spawnSubagent' },
              },
            },
            afterStep: hookStage(
              'afterStep',
              RECORD,
              onActorError(RECORD, { failTarget: RECORD, evaluate: false }),
            ),
            record: {
              entry: ['recordStep', 'emitStepFinished', 'emitContinuationEvaluated'],
              // with a session the step is saved first; without one, `record` chooses as `continueOrStop` would
              always: [{ guard: 'hasSession', target: 'persist' }, ...CONTINUE_OR_STOP_WITHOUT_SESSION],
            },
            persist: checkpointStage(StateId.continueOrStop, FAILING),
            continueOrStop: { always: CONTINUE_OR_STOP },
          },
        },
        failing: {
          entry: 'emitError',
          ...hookStage(
            'onError',
            AFTER_EXECUTION,
            onActorError(AFTER_EXECUTION, { failTarget: AFTER_EXECUTION, evaluate: false }),
          ),
        },
        // entered only by an agent with afterExecution hooks (`toAfterExecution`)
        afterExecution: {
          ...hookStage(
            'afterExecution',
            FINALIZING,
            onActorError(FINALIZING, { failTarget: StateId.failingAfterExecution }),
            { enteredWithHooks: true },
          ),
          on: { stop: { target: 'finalizing' } },
        },
        // an afterExecution hook failed: onError hooks as for any failure, then the outcome
        failingAfterExecution: {
          entry: 'emitError',
          ...hookStage(
            'onError',
            FINALIZING,
            onActorError(FINALIZING, { failTarget: FINALIZING, evaluate: false }),
          ),
          on: { stop: { target: 'finalizing' } },
        },
        finalizing: {
          // a message steered too late for a step waits, saved, for the next execution's first step
          entry: 'completeExecution',
          // the run is over: a stop changes nothing while the final state is saved
          on: { stop: {} },
          // without a session, `checkStore` concludes as `concluding` would
          ...persistStage(StateId.concluding, StateId.concluding, {
            withoutStore: CONCLUDE,
          }),
        },
        concluding: { always: CONCLUDE },
      },
    },
    completed: { tags: [LoopTag.outcome], entry: 'emitExecutionFinished', on: acceptsWork() },
    stopped: { tags: [LoopTag.outcome], entry: 'emitExecutionFinished', on: acceptsWork() },
    failed: { tags: [LoopTag.outcome], entry: 'emitExecutionFinished', on: acceptsWork() },
  },
});

export type { AgentEvent } from '../src/state/loop-events';
export type {
  AgentRef,
  IntentSave,
  LoopContext,
  LoopEvent,
  LoopInput,
  LoopSession,
  StepCheck,
  WorkerInput,
} from './loop-context';
export { subagentActor } from './loop-setup';
export { type ImplementationKind, NotProvidedError } from './not-provided';
export { LoopTag, StateId, statePath } from './state-ids';
export type {
  CancelRequest,
  CheckpointRequest,
  HookStage,
  HooksRequest,
  WorkerAnswer,
  WorkerId,
  WorkRequest,
} from './worker-protocol';
