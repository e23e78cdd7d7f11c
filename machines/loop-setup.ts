/**
 * The agent machine's setup: its types, the actors it invokes (by name only: the runtime provides
 * them with `agentLoop.provide({ actors })`), its guards and its delay. Actions are added by
 * `loop-actions.ts` and `loop-emits.ts`; the chart is `agentLoop.ts`.
 */
import { fromCallback, setup } from 'xstate';
import { AgentState } from '../src/state/agent-state';
import { AgentStopError } from '../src/state/agent-stop-error';
import { budgetSignal } from '../src/state/budget-signal';
import { ExecutionStatus, isTerminalStatus } from '../src/state/execution-status';
import type { LoopEmitted } from '../src/state/loop-events';
import { pendingMatches } from '../src/state/pending-approval';
import { isPersonStop } from '../src/state/stop-signal';
import {
  hasSaveTarget,
  type LoopContext,
  type LoopEvent,
  type LoopInput,
  outputState,
  pendingSteering,
  routeOf,
  stateToRun,
  steeredMessage,
  timeLimitOf,
  type WorkerInput,
} from './loop-context';
import { notProvided } from './not-provided';
import type { LoopTag } from './state-ids';
import type {
  CancelRequest,
  CheckpointRequest,
  HookStage,
  HooksRequest,
  WorkRequest,
} from './worker-protocol';

/** A state with no execution: what the budget sees of an execution about to start (no step, no usage, no time). */
const NOT_STARTED = AgentState.empty();

/**
 * The name a subagent's child agent actor is registered under, on the machine of each agent that
 * may call it (the runtime provides one per subagent); spawned by this name, so a persisted
 * snapshot names the child's logic and can be restored.
 */
export const subagentActor = (name: string) => `subagent:${name}`;

export const loopSetup = setup({
  types: {
    context: {} as LoopContext,
    events: {} as LoopEvent,
    input: {} as LoopInput,
    emitted: {} as LoopEmitted,
    tags: {} as LoopTag,
  },
  actors: {
    hooks: fromCallback<HooksRequest | CancelRequest, WorkerInput>(notProvided('actor', 'hooks')),
    driver: fromCallback<WorkRequest | CancelRequest, WorkerInput>(notProvided('actor', 'driver')),
    toolExecutor: fromCallback<WorkRequest | CancelRequest, WorkerInput>(
      notProvided('actor', 'toolExecutor'),
    ),
    /** Saves the state to the session store (a step's intent only when it starts unsafe calls). */
    checkpoint: fromCallback<CheckpointRequest | CancelRequest, WorkerInput>(
      notProvided('actor', 'checkpoint'),
    ),
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
    /**
     * The budget, checked again after beforeStep hooks: a limit used up stops the run whatever the
     * hooks asked (a continuation request overrides other stop signals, never a budget).
     */
    overBudget: ({ context }) => budgetSignal(context.budget, context.state, Date.now()) !== null,
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
    /** A person's stop (a `stop` event, an aborted signal) stands: not a hook's `user_requested` signal. */
    userStopped: ({ context }) =>
      context.state.execution()?.continuation().stopSignals.some(isPersonStop) ?? false,
    hasSession: ({ context }) => context.session !== null,
    /** The run has somewhere to save (`hasSaveTarget` in loop-context.ts): its session, or its caller's. */
    hasSaveTarget: ({ context }) => hasSaveTarget(context),
    /**
     * The step's tools about to run include an unsafe call (its intent is saved first). The runtime
     * provides it (it knows the tools); the chart alone throws NotProvidedError.
     */
    startsUnsafeCalls: notProvided('guard', 'startsUnsafeCalls'),
    /** The state waits for (or has just received) decisions on tool calls of its step in flight. */
    awaitsApproval: ({ context, event }) => stateToRun(context, event).approval() !== null,
    /**
     * A saved execution whose last recorded step already ended it (saved between `record` and
     * finalizing: a crash, or a worker closed): only afterExecution is left, no model call. A
     * message steered in before that save takes one more step, as it would have without the crash.
     */
    endedWhenSaved: ({ context, event }) => {
      const state = stateToRun(context, event);
      return (
        state.status() === ExecutionStatus.InProgress &&
        state.stepCount() > 0 &&
        state.currentStep() === null &&
        state.shouldStop() &&
        state.steeredMessages().length === 0
      );
    },
    asksApproval: ({ event }) => outputState(event).approval() !== null,
    /** A decision that names exactly one pending call (a call inside a subagent included). */
    isPendingCall: ({ context, event }) =>
      'toolCallId' in event &&
      pendingMatches(context.state.pendingApprovals(), event.toolCallId, routeOf(event)).length === 1,
    allDecided: ({ context }) => context.state.pendingApprovals().length === 0,
    /** The time budget (maxSeconds, deadline) ran out while the run waited for approval. */
    timeBudgetExhausted: ({ context }) => timeLimitOf(context) === 0,
    hasTimeLimit: ({ context }) => timeLimitOf(context) !== null,
    carriesMessage: ({ event }) => steeredMessage(event) !== null,
    /** A `user.message` whose `text` is not a string (sent by untyped code): refused, not appended. */
    lacksUserText: ({ event }) => event.type === 'user.message' && typeof event.text !== 'string',
    /** Messages were steered in and no stop signal stands (the model just answered without tool calls). */
    steeredAfterAnswer: ({ context }) =>
      pendingSteering(context).length > 0 &&
      !(context.state.execution()?.continuation().hasStopSignals() ?? false),
    /**
     * A run no one observes (`LoopContext.observed`), deciding to stop with no afterExecution hooks,
     * ends in its outcome at once: the one whose status (`params.status`) `completeExecution` will set.
     */
    concludesAtOnce: ({ context }, params: { status: ExecutionStatus }) =>
      !context.observed &&
      !context.hookStages.includes('afterExecution') &&
      context.state.shouldStop() &&
      context.state.concludingStatus() === params.status,
    /**
     * A run no one observes (`LoopContext.observed`), with no beforeStep hooks, goes on: its next
     * step starts at the model call, if it has budget left (checked as `startStep` would: it then
     * sets no signal).
     */
    startsStepAtOnce: ({ context }) =>
      !context.observed &&
      !context.hookStages.includes('beforeStep') &&
      budgetSignal(context.budget, context.state, Date.now()) === null,
    /**
     * `execute` or `user.message` of a run no one listens to, with no beforeStep hooks, that starts
     * a new execution (none in progress or set ahead: nothing but the budget can stop its first
     * step): the step starts at the model call if the budget allows one on a fresh execution. Not
     * a listened run's: its `step.started` (and a `message.steered` saved for this step) would come
     * before `execution.started`, emitted as `inProgress` is entered, after the transition's actions.
     */
    startsRunAtOnce: ({ context, event }) => {
      if (context.reports || context.hookStages.includes('beforeStep')) return false;
      const state = stateToRun(context, event);
      return (
        (state.execution() === null || isTerminalStatus(state.status())) &&
        budgetSignal(context.budget, NOT_STARTED, Date.now()) === null
      );
    },
    isFailed: ({ context }) => context.state.status() === ExecutionStatus.Failed,
    isStopped: ({ context }) => context.state.status() === ExecutionStatus.Stopped,
  },
});
