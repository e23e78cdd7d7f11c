/**
 * XState 6 port of machines/agentLoop.ts: the same states, transitions, tags, actors and ids; each
 * v5 `actions: [...]` list is `run(...)`, each guarded list `when(...)` (when.ts).
 */

import type { LoopInput } from '../repo/machines/loop-context';
import { LoopTag, StateId } from '../repo/machines/state-ids';
import { ExecutionBudget } from '../repo/src/state/execution-budget';
import { workerInput } from './loop-actions';
import { loopSetup } from './loop-setup';
import {
  AFTER_BEFORE_STEP_HOOKS,
  AFTER_EXECUTION,
  acceptsWork,
  acceptsWorkOrDecisions,
  CONCLUDE,
  checkpointInvoke,
  DECIDE,
  DROP_STALE,
  decisionTransitions,
  FAILING,
  FINALIZING,
  hookStage,
  intentInvoke,
  onActorError,
  persistStage,
  RECORD,
  STOP_IN_STEP,
  STOP_WITHOUT_STEP,
  TO_AFTER_STEP,
  TO_INFERENCE,
} from './loop-transitions';
import { run, when } from './when';

export const agentLoop = loopSetup.createMachine({
  id: 'agent',
  context: ({ input }: { input: LoopInput }) => ({
    state: input.state,
    error: null,
    hookStages: input.hookStages ?? [],
    budget: input.budget ?? ExecutionBudget.unlimited(),
    session: input.session ?? null,
    reports: input.reports ?? true,
    checkStep: input.checkStep ?? null,
    toolExecutorStarted: false,
    steering: [],
  }),
  initial: 'pending',
  on: {
    'subagent.release': when({ actions: 'releaseSubagent' }),
    steer: when({ actions: 'refuseSteer' }),
  },
  states: {
    pending: { on: acceptsWorkOrDecisions() },
    inProgress: {
      initial: 'beforeExecution',
      entry: run('emitExecutionStarted', 'startHooksWorker'),
      exit: run('stopHooksWorker'),
      on: {
        stop: when({ target: '.afterExecution', actions: ['keepSettledToolCalls', 'recordUserStop'] }),
        execute: when({ actions: 'refuseWhileRunning' }),
        'user.message': when({ actions: 'refuseWhileRunning' }),
        steer: when(
          { guard: 'carriesMessage', actions: 'keepSteer' },
          { actions: { type: 'refuseSteer', params: { running: true } } },
        ),
        'tool.started': when({ actions: 'forwardReport' }),
        'tool.finished': when({ actions: 'forwardReport' }),
        'text.delta': when({ actions: 'forwardReport' }),
        'context.compacted': when({ actions: 'forwardReport' }),
      },
      states: {
        beforeExecution: hookStage('beforeExecution', StateId.step, onActorError(AFTER_EXECUTION)),
        step: {
          initial: 'beforeStep',
          invoke: { id: 'driver', src: 'driver', input: workerInput },
          exit: run('stopToolExecutor'),
          states: {
            beforeStep: {
              entry: run('startStep', 'emitMessagesSteered', 'applySteering', 'emitStepStarted'),
              ...hookStage('beforeStep', StateId.checkSignals, onActorError(AFTER_EXECUTION), {
                withoutHooks: TO_INFERENCE,
              }),
            },
            checkSignals: { always: when(...AFTER_BEFORE_STEP_HOOKS) },
            inference: {
              entry: run('requestInference'),
              on: {
                'driver.done': when(
                  DROP_STALE,
                  { guard: 'asksApproval', target: 'awaitingApproval', actions: 'assignState' },
                  {
                    guard: { and: ['hasToolCalls', 'hasSession'] },
                    target: 'intent',
                    actions: 'assignStateForTools',
                  },
                  { guard: 'hasToolCalls', target: 'tools', actions: 'assignStateForTools' },
                  ...TO_AFTER_STEP,
                ),
                'driver.error': when(
                  DROP_STALE,
                  STOP_WITHOUT_STEP,
                  ...onActorError(null, { failTarget: 'afterStep', inStep: true, evaluate: false }),
                ),
              },
            },
            awaitingApproval: {
              initial: 'checkStore',
              on: { stop: when(STOP_IN_STEP) },
              states: {
                ...persistStage(StateId.waitingForDecisions, StateId.afterStep, { evaluate: false }).states,
                waiting: {
                  entry: run('emitApprovalRequested'),
                  tags: [LoopTag.awaitingDecisions],
                  always: when(
                    {
                      guard: 'timeBudgetExhausted',
                      target: StateId.afterStep,
                      actions: 'recordApprovalTimeout',
                    },
                    {
                      guard: { and: ['allDecided', 'hasSession'] },
                      target: StateId.intent,
                      actions: 'startToolExecutor',
                    },
                    { guard: 'allDecided', target: StateId.tools, actions: 'startToolExecutor' },
                  ),
                  after: {
                    approvalTimeout: when({
                      guard: 'hasTimeLimit',
                      target: StateId.afterStep,
                      actions: 'recordApprovalTimeout',
                    }),
                  },
                  on: {
                    approve: decisionTransitions(),
                    reject: decisionTransitions(),
                    edit: decisionTransitions(),
                    execute: when({ actions: 'refuseEvent' }),
                    'user.message': when({ actions: 'refuseEvent' }),
                  },
                },
              },
            },
            intent: {
              initial: 'check',
              on: { stop: when(STOP_IN_STEP) },
              states: {
                check: {
                  always: when({ guard: 'startsUnsafeCalls', target: 'saving' }, { target: StateId.tools }),
                },
                saving: { invoke: intentInvoke(StateId.tools, StateId.afterStep, false) },
              },
            },
            tools: {
              entry: run('requestTools'),
              on: {
                stop: when({ ...STOP_IN_STEP, actions: ['cancelTools', ...STOP_IN_STEP.actions] }),
                'toolExecutor.done': when(
                  DROP_STALE,
                  { guard: 'asksApproval', target: 'awaitingApproval', actions: 'assignState' },
                  ...TO_AFTER_STEP,
                ),
                'toolExecutor.error': when(
                  DROP_STALE,
                  ...onActorError('afterStep', {
                    failTarget: 'afterStep',
                    evaluate: false,
                    keepSettled: true,
                  }),
                ),
                'subagent.spawn': when({ actions: 'spawnSubagent' }),
              },
            },
            afterStep: hookStage(
              'afterStep',
              RECORD,
              onActorError(RECORD, { failTarget: RECORD, evaluate: false }),
            ),
            record: {
              entry: run('recordStep', 'saveSteering', 'emitStepFinished', 'emitContinuationEvaluated'),
              always: when({ guard: 'hasSession', target: 'persist' }, ...DECIDE),
            },
            persist: { invoke: checkpointInvoke(StateId.continueOrStop, FAILING) },
            continueOrStop: { always: when(...DECIDE) },
          },
        },
        failing: {
          entry: run('emitError'),
          ...hookStage(
            'onError',
            AFTER_EXECUTION,
            onActorError(AFTER_EXECUTION, { failTarget: AFTER_EXECUTION, evaluate: false }),
          ),
        },
        afterExecution: {
          ...hookStage(
            'afterExecution',
            FINALIZING,
            onActorError(FINALIZING, { failTarget: StateId.failingAfterExecution }),
          ),
          on: { stop: { target: 'finalizing' } },
        },
        failingAfterExecution: {
          entry: run('emitError'),
          ...hookStage(
            'onError',
            FINALIZING,
            onActorError(FINALIZING, { failTarget: FINALIZING, evaluate: false }),
          ),
          on: { stop: { target: 'finalizing' } },
        },
        finalizing: {
          entry: run('saveSteering', 'completeExecution'),
          on: { stop: {} },
          ...persistStage(StateId.concluding, StateId.concluding, { withoutStore: CONCLUDE }),
        },
        concluding: { always: when(...CONCLUDE) },
      },
    },
    completed: { tags: [LoopTag.outcome], entry: run('emitExecutionFinished'), on: acceptsWork() },
    stopped: { tags: [LoopTag.outcome], entry: run('emitExecutionFinished'), on: acceptsWork() },
    failed: { tags: [LoopTag.outcome], entry: run('emitExecutionFinished'), on: acceptsWork() },
  },
});
