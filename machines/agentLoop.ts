/**
 * The agent loop as a statechart: the ExecutionStatus lifecycle and the step cycle of one agent.
 * Its context holds the immutable AgentState. The actors it invokes are named here and provided
 * by the runtime (`createAgent`) with `agentLoop.provide({ actors })`: three workers that take
 * requests, `hooks` for the execution and `driver` and `toolExecutor` for the step cycle (an actor
 * per stage or step would cost more than the rest of the step), and `checkpoint` per save. The
 * guards and actions are one-line uses of AgentState.
 *
 * pending -> inProgress [ beforeExecution -> step [ beforeStep -> checkpoint -> inference
 *   -> (awaitingApproval) -> tools
 *   -> afterStep -> record -> persist -> decide ] -> (failing) -> afterExecution -> finalizing
 *   -> concluding ] -> completed | stopped | failed
 */
import { type AnyActorRef, assign, emit, fromCallback, fromPromise, sendTo, setup, stopChild } from 'xstate';
import { budgetSignal } from '../src/hooks/budget-guards';
import { AgentError } from '../src/state/agent-error';
import type { AgentState } from '../src/state/agent-state';
import { AgentStopError } from '../src/state/agent-stop-error';
import { type ApprovalDecision, ApprovalError } from '../src/state/approval';
import { ExecutionBudget } from '../src/state/execution-budget';
import { ExecutionStatus } from '../src/state/execution-status';
import type { AgentEvent, LoopEmitted, ReportEvent } from '../src/state/loop-events';
import { StopReason } from '../src/state/stop-reason';
import { StopSignal } from '../src/state/stop-signal';

/** The hook stages the `hooks` actor runs (beforeToolUse / afterToolUse run inside `toolExecutor`). */
export type HookStage = 'beforeExecution' | 'beforeStep' | 'afterStep' | 'afterExecution' | 'onError';

export interface LoopContext {
  readonly state: AgentState;
  /** The error that sent the run to `failing`, for onError hooks. */
  readonly error: AgentError | null;
  /** The stages the agent has hooks for; the others are passed without invoking `hooks`. */
  readonly hookStages: readonly HookStage[];
  /** The budget this run is held to (a subagent's is capped by its parent's remainder). */
  readonly budget: ExecutionBudget;
  /** The session the run checkpoints to, with the version last saved; null without a store. */
  readonly session: LoopSession | null;
  /** False when no one can listen (a plain `execute()`): the actors then skip their reports. */
  readonly reports: boolean;
}

export interface LoopSession {
  readonly id: string;
  readonly version: number | null;
}

export interface CheckpointInput {
  readonly state: AgentState;
  readonly session: LoopSession;
}

export interface LoopInput {
  readonly state: AgentState;
  readonly hookStages?: readonly HookStage[];
  readonly budget?: ExecutionBudget;
  readonly session?: LoopSession | null;
  /** Send tool and text reports through the machine (to listeners and inspectors). Default true. */
  readonly reports?: boolean;
}

/** Events the machine accepts: the public ones and the reports its own actors send it. */
export type LoopEvent =
  | { type: 'execute' }
  | { type: 'user.message'; text: string }
  | { type: 'stop'; reason?: string }
  | ApprovalEvent
  | ReportEvent
  | SubagentEvent
  | WorkerAnswer;

/** A person's decision on a tool call awaiting approval. */
export type ApprovalEvent =
  | { type: 'approve'; toolCallId: string }
  | { type: 'reject'; toolCallId: string; reason?: string }
  | { type: 'edit'; toolCallId: string; input: unknown };

/**
 * A subagent tool asks its agent's actor to spawn the child agent actor (so the child lives in the
 * actor tree and the inspector), and to release it once the child's execution has ended.
 */
export type SubagentEvent =
  | { type: 'subagent.spawn'; id: string; name: string; state: AgentState; budget: ExecutionBudget }
  | { type: 'subagent.release'; id: string };

/** What the workers (`hooks`, `driver`, `toolExecutor`) are made with: the agent actor they work for. */
export interface WorkerInput {
  readonly agent: AnyActorRef;
}

/**
 * The workers live as long as the part of the run they serve (`hooks` the execution, `driver` and
 * `toolExecutor` the step cycle) and take one request at a time: `{ type: 'work', state }` (the
 * hooks worker also gets the stage and, for onError, the error). They answer the agent with
 * `<id>.done` (`output`: the new state) or `<id>.error` (`error`), echoing the request's `token`;
 * work that finishes synchronously (a stack of plain-function hooks) is answered at once. `cancel`
 * aborts the request in flight and drops its answer; so does stopping the worker. An answer already
 * on its way when its wait was left (a stop, even a new execution, came first) carries a token
 * that is not the one waited for now, and is dropped.
 */
export interface WorkRequest {
  readonly type: 'work';
  readonly state: AgentState;
  /** Which wait the request belongs to: the state it was made with (see `isStale`); the answer echoes it. */
  readonly token: AgentState;
}
export interface HooksRequest extends WorkRequest {
  readonly stage: HookStage;
  readonly error: AgentError | null;
}
export interface CancelRequest {
  readonly type: 'cancel';
}
export type WorkerId = 'hooks' | 'driver' | 'toolExecutor';
export type WorkerAnswer =
  | { type: `${WorkerId}.done`; output: AgentState; token?: unknown }
  | { type: `${WorkerId}.error`; error: unknown; token?: unknown };

const notProvided = (name: string) => (): never => {
  throw new Error(`The '${name}' actor is not provided: create the agent with createAgent()`);
};

const now = () => Date.now();
const AFTER_EXECUTION = '#agent.inProgress.afterExecution';
const FAILING = '#agent.inProgress.failing';
const FINALIZING = '#agent.inProgress.finalizing';
const outputState = (event: unknown) => (event as { output?: unknown }).output as AgentState;
/** The seed's shouldStop? after a recorded step: afterExecution, or the next step. */
const DECIDE = [
  { guard: 'shouldStop', target: AFTER_EXECUTION },
  { target: '#agent.inProgress.step.beforeStep' },
] as const;
/**
 * The step's model call and tools are done: its state is kept, and the afterStep hooks run if the
 * agent has any; without them the step is recorded at once (no pass through `afterStep`).
 */
const TO_AFTER_STEP = [
  {
    guard: { type: 'hasHooks', params: { stage: 'afterStep' } },
    target: '#agent.inProgress.step.afterStep.runHooks',
    actions: 'assignState',
  },
  { target: '#agent.inProgress.step.record', actions: 'assignState' },
] as const;
/** Drops (takes without a transition) a worker answer to another request than the one waited for. */
const DROP_STALE = { guard: 'isStale' } as const;
/** The execution's outcome, from the status `completeExecution` set. */
const CONCLUDE = [
  { guard: 'isFailed', target: '#agent.failed' },
  { guard: 'isStopped', target: '#agent.stopped' },
  { target: '#agent.completed' },
] as const;
/** After beforeStep: a stop signal without a continuation request ends the run, else the model is called. */
const TO_INFERENCE = [
  { guard: 'stopSignalled', target: AFTER_EXECUTION },
  { target: '#agent.inProgress.step.inference' },
] as const;

export const agentLoop = setup({
  types: {
    context: {} as LoopContext,
    events: {} as LoopEvent,
    input: {} as LoopInput,
    emitted: {} as LoopEmitted,
  },
  actors: {
    hooks: fromCallback<HooksRequest | CancelRequest, WorkerInput>(notProvided('hooks')),
    driver: fromCallback<WorkRequest | CancelRequest, WorkerInput>(notProvided('driver')),
    toolExecutor: fromCallback<WorkRequest | CancelRequest, WorkerInput>(notProvided('toolExecutor')),
    /** Saves the state to the session store; resolves with the new version. */
    checkpoint: fromPromise<number, CheckpointInput>(async () => notProvided('checkpoint')()),
  },
  delays: {
    // setTimeout's maximum; the transition's guard ignores it when there is no time limit
    approvalTimeout: ({ context }) => Math.min(timeLimitOf(context) ?? 2_147_483_647, 2_147_483_647),
  },
  guards: {
    /** The seed's shouldStop(): a signal without override stops, continuation or tool calls go on. */
    shouldStop: ({ context }) => context.state.shouldStop(),
    /** Checkpoint after beforeStep: a stop signal without a continuation request. */
    stopSignalled: ({ context }) => context.state.execution()?.continuation().shouldStop() ?? false,
    hasHooks: ({ context }, params: { stage: HookStage }) => context.hookStages.includes(params.stage),
    /**
     * A worker answer to another request than the one waited for (on its way when a stop, or a new
     * execution, came): a state waiting for an answer does not change, so the request's token (the
     * state it was made with) is the state now, and any other token is stale.
     */
    isStale: ({ context, event }) =>
      'token' in event && event.token !== undefined && event.token !== context.state,
    hasToolCalls: ({ event }) => outputState(event).currentStep()?.hasToolCalls() ?? false,
    isStopRequest: ({ event }) => AgentStopError.is((event as { error?: unknown }).error),
    hasSession: ({ context }) => context.session !== null,
    /** The state waits for (or has just received) decisions on tool calls of its step in flight. */
    awaitsApproval: ({ context }) => context.state.approval() !== null,
    asksApproval: ({ event }) => outputState(event).approval() !== null,
    isPendingCall: ({ context, event }) =>
      'toolCallId' in event &&
      context.state.pendingApprovals().some((p) => p.toolCallId === event.toolCallId),
    allDecided: ({ context }) => context.state.pendingApprovals().length === 0,
    /** The time budget (maxSeconds, deadline) ran out while the run waited for approval. */
    timeBudgetExhausted: ({ context }) => timeLimitOf(context) === 0,
    hasTimeLimit: ({ context }) => timeLimitOf(context) !== null,
    isFailed: ({ context }) => context.state.status() === ExecutionStatus.Failed,
    isStopped: ({ context }) => context.state.status() === ExecutionStatus.Stopped,
  },
  actions: {
    appendUserMessage: assign({
      state: ({ context, event }) =>
        event.type === 'user.message' ? context.state.withUserMessage(event.text) : context.state,
    }),
    startExecution: assign({
      state: ({ context }) => context.state.withExecutionStarted(now()),
      error: null,
    }),
    assignState: assign({ state: ({ event }) => outputState(event) }),
    /** Starts a step; a budget already used up (steps, tokens, cost, time) sets the stop signal. */
    startStep: assign({
      state: ({ context }) => {
        const at = now();
        const started = context.state.withStepStarted(at);
        const signal = budgetSignal(context.budget, started, at);
        return signal ? started.withStopSignal(signal) : started;
      },
    }),
    /**
     * Records the step in flight. The runtime provides the agent's version, which first applies its
     * after-step guards (structured output, finish reasons, error policy) in the same update.
     */
    recordStep: assign({ state: ({ context }) => context.state.withCurrentStepRecorded(now()) }),
    recordStopRequest: assign({
      state: ({ context, event }) => {
        const error = (event as { error?: AgentStopError }).error;
        return (error?.state ?? context.state).withStopSignal(AgentStopError.toSignal(error));
      },
    }),
    /** A save that failed (a version conflict, a full disk): the run fails, the error recorded. */
    recordCheckpointFailure: assign(({ context, event }) => {
      const error = AgentError.from((event as { error?: unknown }).error);
      return { state: context.state.withFailure(error, StopReason.ErrorForbade, 'checkpoint'), error };
    }),
    /** An error that ends the run; `inStep` when the step itself failed (the model call). */
    recordFailure: assign(({ context, event }, params?: { inStep?: boolean }) => {
      const error = AgentError.from((event as { error?: unknown }).error);
      const state = context.state.withPendingToolCallsFailed(error);
      return { state: state.withFailure(error, StopReason.ErrorForbade, 'agent-loop', params), error };
    }),
    /** Tool calls that settled before a stop keep their results; the runtime's tool executor knows them. */
    keepSettledToolCalls: () => {},
    recordUserStop: assign({
      state: ({ context, event }) => {
        const reason = event.type === 'stop' && event.reason ? event.reason : 'Stopped by user request';
        const aborted = AgentError.of('AbortError', reason, 'ABORTED');
        return context.state
          .withPendingToolCallsFailed(aborted)
          .withStopSignal(StopSignal.userRequested(reason));
      },
    }),
    completeExecution: assign({ state: ({ context }) => context.state.withExecutionCompleted(now()) }),
    recordDecision: assign({
      state: ({ context, event }) => context.state.withApprovalDecision(...toDecision(event)),
    }),
    recordApprovalTimeout: assign({
      state: ({ context }) =>
        context.state
          .withPendingToolCallsFailed(
            AgentError.of(
              'ApprovalTimeout',
              'No decision before the time budget ran out',
              'APPROVAL_TIMEOUT',
            ),
          )
          .withStopSignal(
            StopSignal.of(
              StopReason.TimeLimitReached,
              'Time limit reached while awaiting approval',
              { limit: 'approval', pending: context.state.pendingApprovals().map((p) => p.toolCallId) },
              'awaitingApproval',
            ),
          ),
    }),
    emitApprovalRequested: emit(({ context }) => ({
      type: 'approval.requested' as const,
      ...ids(context.state),
      stepNumber: context.state.stepCount() + 1,
      toolCalls: context.state.pendingApprovals(),
    })),
    emitApprovalDecided: emit(({ context, event }) => {
      const [toolCallId, decision] = toDecision(event);
      return {
        type: 'approval.decided' as const,
        ...ids(context.state),
        stepNumber: context.state.stepCount() + 1,
        toolCallId,
        decision,
      };
    }),
    /** An event the agent cannot take now (a decision for a call that is not pending, a message mid-approval). */
    refuseEvent: emit(({ context, event }) => {
      const error =
        'toolCallId' in event
          ? ApprovalError.notPending(
              event.toolCallId,
              context.state.pendingApprovals().map((p) => p.toolCallId),
            )
          : new ApprovalError(
              'APPROVAL_PENDING',
              `'${event.type}' refused: the run waits for approval of ${context.state
                .pendingApprovals()
                .map((p) => p.toolCallId)
                .join(', ')}; decide first (agent.decide or approve/reject/edit events)`,
            );
      return {
        type: 'event.refused' as const,
        ...ids(context.state),
        event: event.type,
        error: AgentError.from(error),
      };
    }),
    assignVersion: assign({
      session: ({ context, event }) =>
        context.session && { ...context.session, version: (event as { output?: number }).output ?? null },
    }),
    emitExecutionStarted: emit(({ context }) => ({
      type: 'execution.started' as const,
      ...ids(context.state),
    })),
    emitStepStarted: emit(({ context }) => ({
      type: 'step.started' as const,
      ...ids(context.state),
      stepNumber: context.state.stepCount() + 1,
    })),
    emitStepFinished: emit(({ context }) => {
      const step = context.state.lastStepExecution();
      return {
        type: 'step.finished' as const,
        ...ids(context.state),
        stepNumber: context.state.stepCount(),
        stepId: step?.id() ?? '',
        stepType: step?.step().stepType() ?? 'final_response',
        finishReason: step?.step().finishReason() ?? null,
        usage: step?.usage() ?? context.state.usage(),
        errors: step?.step().errors() ?? [],
        durationMs: (step?.duration() ?? 0) * 1000,
      };
    }),
    emitContinuationEvaluated: emit(({ context }) => {
      const signal = context.state.stopSignal();
      return {
        type: 'continuation.evaluated' as const,
        ...ids(context.state),
        stepNumber: context.state.stepCount(),
        shouldStop: context.state.shouldStop(),
        stopSignal: signal,
        stopReason: signal?.reason ?? null,
        source: signal?.source ?? null,
      };
    }),
    emitError: emit(({ context }) => ({
      type: 'error' as const,
      ...ids(context.state),
      stepNumber: context.state.stepCount(),
      error: context.error ?? AgentError.of('Error', 'unknown error'),
    })),
    emitExecutionFinished: emit(({ context }) => ({
      type: 'execution.finished' as const,
      ...ids(context.state),
      status: context.state.status(),
      stopReason: context.state.stopReason(),
      stepCount: context.state.stepCount(),
      usage: context.state.usage(),
    })),
    /** Sends the state to the step's workers: the model call, then the tools it asked for. */
    requestInference: sendTo('driver', ({ context }) => ({
      type: 'work' as const,
      state: context.state,
      token: context.state,
    })),
    requestTools: sendTo('toolExecutor', ({ context }) => ({
      type: 'work' as const,
      state: context.state,
      token: context.state,
    })),
    /** Sends the state to the hooks worker, for the hooks of one stage (onError hooks get the error). */
    requestHooks: sendTo('hooks', ({ context }, params: { stage: HookStage }) => ({
      type: 'work' as const,
      stage: params.stage,
      state: context.state,
      error: params.stage === 'onError' ? context.error : null,
      token: context.state,
    })),
    cancelHooks: sendTo('hooks', { type: 'cancel' as const }),
    /** The hooks worker lives as long as the execution, for an agent that has hooks (an idle one costs). */
    startHooksWorker: assign(({ context, spawn, self }) => {
      if (context.hookStages.length > 0) spawn('hooks', { id: 'hooks', input: workerInput({ self }) });
      return {};
    }),
    stopHooksWorker: stopChild('hooks'),
    /** Spawns the child agent actor for a subagent call; provided by the runtime, which knows the child. */
    spawnSubagent: () => {},
    releaseSubagent: stopChild(({ event }) => (event.type === 'subagent.release' ? event.id : '')),
    /** Reports from the actors (tool calls, text deltas) go out to subscribers unchanged. */
    forwardReport: emit(({ event }) => event as ReportEvent),
  },
}).createMachine({
  id: 'agent',
  context: ({ input }) => ({
    state: input.state,
    error: null,
    hookStages: input.hookStages ?? [],
    budget: input.budget ?? ExecutionBudget.unlimited(),
    session: input.session ?? null,
    reports: input.reports ?? true,
  }),
  initial: 'pending',
  on: { 'subagent.release': { actions: 'releaseSubagent' } },
  states: {
    pending: { on: acceptsWorkOrDecisions() },
    inProgress: {
      initial: 'beforeExecution',
      entry: ['emitExecutionStarted', 'startHooksWorker'],
      exit: 'stopHooksWorker',
      on: {
        stop: { target: '.afterExecution', actions: ['keepSettledToolCalls', 'recordUserStop'] },
        'tool.started': { actions: 'forwardReport' },
        'tool.finished': { actions: 'forwardReport' },
        'text.delta': { actions: 'forwardReport' },
      },
      states: {
        beforeExecution: hookStage(
          'beforeExecution',
          '#agent.inProgress.step',
          onActorError(AFTER_EXECUTION),
        ),
        step: {
          initial: 'beforeStep',
          // The step's two workers live as long as the step cycle (made once per execution, not per
          // step); `inference` and `tools` send them the state and wait for their answer events.
          invoke: [
            { id: 'driver', src: 'driver', input: workerInput },
            { id: 'toolExecutor', src: 'toolExecutor', input: workerInput },
          ],
          states: {
            beforeStep: {
              entry: ['startStep', 'emitStepStarted'],
              ...hookStage('beforeStep', '#agent.inProgress.step.checkpoint', onActorError(AFTER_EXECUTION), {
                withoutHooks: TO_INFERENCE,
              }),
            },
            // after beforeStep hooks changed the state (without hooks, `checkHooks` decides the same)
            checkpoint: { always: TO_INFERENCE },
            inference: {
              entry: 'requestInference',
              on: {
                'driver.done': [
                  DROP_STALE,
                  { guard: 'asksApproval', target: 'awaitingApproval', actions: 'assignState' },
                  { guard: 'hasToolCalls', target: 'tools', actions: 'assignState' },
                  ...TO_AFTER_STEP,
                ],
                'driver.error': [DROP_STALE, ...onActorError('afterStep', { inStep: true })],
              },
            },
            awaitingApproval: {
              entry: 'emitApprovalRequested',
              initial: 'checkStore',
              states: {
                ...persistStage('#agent.inProgress.step.awaitingApproval.waiting', FAILING).states,
                waiting: {
                  always: [
                    {
                      guard: 'timeBudgetExhausted',
                      target: AFTER_EXECUTION,
                      actions: 'recordApprovalTimeout',
                    },
                    { guard: 'allDecided', target: '#agent.inProgress.step.tools' },
                  ],
                  after: {
                    approvalTimeout: {
                      guard: 'hasTimeLimit',
                      target: AFTER_EXECUTION,
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
            tools: {
              entry: 'requestTools',
              on: {
                'toolExecutor.done': [DROP_STALE, ...TO_AFTER_STEP],
                'toolExecutor.error': [DROP_STALE, ...onActorError('afterStep')],
                'subagent.spawn': { actions: 'spawnSubagent' },
              },
            },
            afterStep: hookStage(
              'afterStep',
              '#agent.inProgress.step.record',
              onActorError('#agent.inProgress.step.record'),
            ),
            record: {
              entry: ['recordStep', 'emitStepFinished', 'emitContinuationEvaluated'],
              // with a session the step is saved first; without one, `record` decides what `decide` would
              always: [{ guard: 'hasSession', target: 'persist' }, ...DECIDE],
            },
            persist: { invoke: checkpointInvoke('#agent.inProgress.step.decide', FAILING) },
            decide: { always: DECIDE },
          },
        },
        failing: {
          entry: 'emitError',
          ...hookStage('onError', AFTER_EXECUTION, [{ target: AFTER_EXECUTION, actions: 'recordFailure' }]),
        },
        afterExecution: {
          ...hookStage('afterExecution', FINALIZING, [{ target: FINALIZING, actions: 'recordFailure' }]),
          on: { stop: { target: 'finalizing' } },
        },
        finalizing: {
          entry: 'completeExecution',
          // the run is over: a stop changes nothing while the final state is saved
          on: { stop: {} },
          // without a session, `checkStore` concludes as `concluding` would
          ...persistStage('#agent.inProgress.concluding', '#agent.inProgress.concluding', {
            withoutStore: CONCLUDE,
          }),
        },
        concluding: { always: CONCLUDE },
      },
    },
    completed: { entry: 'emitExecutionFinished', on: acceptsWork() },
    stopped: { entry: 'emitExecutionFinished', on: acceptsWork() },
    failed: { entry: 'emitExecutionFinished', on: acceptsWork() },
  },
});

/**
 * A hook stage: `runHooks` sends the stage to the `hooks` worker when the agent has hooks for it
 * and waits for its answer; otherwise `checkHooks` goes straight on (to `done`, or by the
 * `withoutHooks` transitions).
 */
function hookStage(
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
function persistStage(
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
function checkpointInvoke(done: string, failed: string) {
  return {
    id: 'checkpoint',
    src: 'checkpoint',
    // The state is not enumerable: an inspector showing the actor's input sees the session only.
    input: ({ context }: { context: LoopContext }): CheckpointInput =>
      Object.defineProperty({ session: context.session! }, 'state', {
        value: context.state,
      }) as CheckpointInput,
    onDone: { target: done, actions: 'assignVersion' },
    onError: { target: failed, actions: 'recordCheckpointFailure' },
  } as const;
}

function workerInput({ self }: { self: AnyActorRef }): WorkerInput {
  return { agent: self };
}

/** `execute` runs the state as it is; `user.message` appends the message first. */
function acceptsWork() {
  return {
    execute: { target: '#agent.inProgress', actions: 'startExecution' },
    'user.message': { target: '#agent.inProgress', actions: ['appendUserMessage', 'startExecution'] },
  } as const;
}

/** In `pending`, a state saved while awaiting approval continues there, with the decisions it carries. */
function acceptsWorkOrDecisions() {
  return {
    execute: [
      {
        guard: 'awaitsApproval',
        target: '#agent.inProgress.step.awaitingApproval',
        actions: 'startExecution',
      },
      acceptsWork().execute,
    ],
    'user.message': [{ guard: 'awaitsApproval', actions: 'refuseEvent' }, acceptsWork()['user.message']],
  } as const;
}

/** A decision on a pending call is recorded; one on any other id is refused, and changes nothing. */
function decisionTransitions() {
  return [
    { guard: 'isPendingCall', actions: ['recordDecision', 'emitApprovalDecided'] },
    { actions: 'refuseEvent' },
  ] as const;
}

function toDecision(event: LoopEvent): [string, ApprovalDecision] {
  if (event.type === 'approve') return [event.toolCallId, { type: 'approve' }];
  if (event.type === 'reject') return [event.toolCallId, { type: 'reject', reason: event.reason }];
  if (event.type === 'edit') return [event.toolCallId, { type: 'edit', args: event.input }];
  throw new TypeError(`not a decision: ${event.type}`);
}

/** Milliseconds left of the run's time budget (maxSeconds, deadline), or null without one. */
function timeLimitOf(context: LoopContext): number | null {
  const { budget, state } = context;
  const started = state.execution()?.startedAtMs() ?? now();
  const limits: number[] = [];
  if (budget.maxSeconds !== null) limits.push(started + budget.maxSeconds * 1000);
  if (budget.deadline !== null) limits.push(budget.deadline.getTime());
  if (limits.length === 0) return null;
  return Math.max(0, Math.min(...limits) - now());
}

/** A stop exception records StopRequested and goes on to `stopTarget`; any other error fails the run. */
function onActorError(stopTarget: string, failure: { inStep?: boolean } = {}) {
  return [
    { guard: 'isStopRequest', target: stopTarget, actions: 'recordStopRequest' },
    { target: '#agent.inProgress.failing', actions: { type: 'recordFailure', params: failure } },
  ] as const;
}

function ids(state: AgentState) {
  return {
    agentId: state.agentId(),
    parentAgentId: state.parentAgentId(),
    executionId: state.executionId() ?? '',
  };
}

export type AgentLoopMachine = typeof agentLoop;
export type { AgentEvent };
