/**
 * The agent machine's actions that change its context (one-line uses of AgentState) and that talk
 * to its workers. Events it emits are added by `loop-emits.ts`.
 */
import { assign, enqueueActions, sendTo, stopChild } from 'xstate';
import { AgentError } from '../src/state/agent-error';
import type { AgentState } from '../src/state/agent-state';
import { AgentStopError } from '../src/state/agent-stop-error';
import { BUDGET_GUARD, budgetSignal } from '../src/state/budget-signal';
import { Message, STEERED } from '../src/state/message';
import { StopReason } from '../src/state/stop-reason';
import { personStop, StopSignal } from '../src/state/stop-signal';
import {
  hasSaveTarget,
  type LoopContext,
  outputState,
  stateToRun,
  steeredMessage,
  toDecision,
  workerInput,
} from './loop-context';
import { loopSetup } from './loop-setup';
import { notProvided } from './not-provided';
import type { HookStage } from './worker-protocol';

const now = () => Date.now();

const contextActions = loopSetup.extend({
  actions: {
    appendUserMessage: assign({
      state: ({ context, event }) =>
        event.type === 'user.message' ? context.state.withUserMessage(event.text) : context.state,
    }),
    /** A steered message is kept marked `steered` (a replay of the run steers it in again). */
    keepSteer: assign({
      steering: ({ context, event }) => {
        const message = steeredMessage(event);
        if (!message) return context.steering;
        return [...context.steering, Message.withMetadata(message, { [STEERED]: true })];
      },
    }),
    /** `stepAtOnce`: its first step starts too (`startsRunAtOnce` checked the budget), in one update. */
    startExecution: assign(({ context, event }, params?: { stepAtOnce?: boolean }) => {
      const at = now();
      const started = stateToRun(context, event).withExecutionStarted(at);
      return {
        state: params?.stepAtOnce ? started.withStepStarted(at) : started,
        error: null,
        toolExecutorStarted: false,
      };
    }),
    assignState: assign({ state: ({ event }) => outputState(event) }),
    /** The model asked for tools: its answer, and the tool executor if this is the cycle's first tool call. */
    assignStateForTools: assign(({ context, event, spawn, self }) => {
      if (context.toolExecutorStarted) return { state: outputState(event) };
      spawn('toolExecutor', { id: 'toolExecutor', input: workerInput({ context, self }) });
      return { state: outputState(event), toolExecutorStarted: true };
    }),
    /** Decided calls go to the tools: the tool executor, if the cycle has not started it yet. */
    startToolExecutor: assign(({ context, spawn, self }) => {
      if (context.toolExecutorStarted) return {};
      spawn('toolExecutor', { id: 'toolExecutor', input: workerInput({ context, self }) });
      return { toolExecutorStarted: true };
    }),
    /** The step cycle ends: its tool executor, if it started one, stops. */
    stopToolExecutor: stopChild('toolExecutor'),
    /**
     * Starts a step; a budget already used up (steps, tokens, cost, time) sets the stop signal.
     * `budgetChecked`: the transition's guard found budget left (`startsStepAtOnce`), a moment ago.
     */
    startStep: assign({
      state: ({ context }, params?: { budgetChecked?: boolean }) => {
        const at = now();
        const started = context.state.withStepStarted(at);
        const signal = params?.budgetChecked ? null : budgetSignal(context.budget, started, at);
        return signal ? started.withStopSignal(signal) : started;
      },
    }),
    /**
     * A limit used up by the time beforeStep hooks answered: its signal (unless the step's start
     * raised it already) stands, and a continuation request is refused.
     */
    stopOverBudget: assign({
      state: ({ context }) => {
        const signal = budgetSignal(context.budget, context.state, now());
        const raised = context.state
          .execution()
          ?.continuation()
          .stopSignals.some((s) => s.source === BUDGET_GUARD && s.context.limit === signal?.context.limit);
        const state = signal && !raised ? context.state.withStopSignal(signal) : context.state;
        return state.withContinuationRequested(false);
      },
    }),
    /**
     * Records the step in flight, after the agent's step checks (`LoopInput.checkStep`) in the same
     * update; messages steered in meanwhile are kept in the state (`withSteeringSaved`).
     */
    recordStep: assign(({ context }) =>
      withSteeringSaved(
        context,
        (context.checkStep ? context.checkStep(context.state) : context.state).withCurrentStepRecorded(now()),
      ),
    ),
    /** A stop exception's signal, on the state it carries (`withoutStep`: the state as it was, no step). */
    recordStopRequest: assign({
      state: ({ context, event }, params?: { withoutStep?: boolean }) => {
        const error = (event as { error?: AgentStopError }).error;
        const state = params?.withoutStep ? context.state : (error?.state ?? context.state);
        return state.withStopSignal(AgentStopError.toSignal(error));
      },
    }),
    /**
     * A save that failed (a version conflict, a full disk): the run fails, the error recorded. A
     * step waiting for its subagents had started their calls: they are recorded as failed with it.
     */
    recordCheckpointFailure: assign(({ context, event }) => {
      const error = AgentError.from((event as { error?: unknown }).error);
      const waitingChildren = Object.keys(context.state.approval()?.children ?? {}).length > 0;
      const state = waitingChildren ? context.state.withPendingToolCallsFailed(notRun(error)) : context.state;
      return { state: state.withFailure(error, StopReason.ErrorForbade, 'checkpoint'), error };
    }),
    /**
     * An error that ends the run, recorded once (on the step, or the execution); `inStep` when the
     * step itself failed (the model call). Its calls that never ran are recorded as not run.
     */
    recordFailure: assign(({ context, event }, params?: { inStep?: boolean }) => {
      const error = AgentError.from((event as { error?: unknown }).error);
      const state = context.state.withPendingToolCallsFailed(notRun(error));
      return { state: state.withFailure(error, StopReason.ErrorForbade, 'agent-loop', params), error };
    }),
    /**
     * Tool calls that settled before a stop keep their results; the runtime's tool executor knows
     * them, and provides this action (the chart alone throws NotProvidedError).
     */
    keepSettledToolCalls: notProvided('action', 'keepSettledToolCalls'),
    /**
     * A person's stop, recorded with where it came (`during`: the state of the step cycle or the
     * hook stage it interrupted, and `stepCount`: the steps recorded by then), so that a replay of
     * the run can send it again at the same point.
     */
    recordUserStop: assign({
      state: ({ context, event, self }) => {
        const reason = event.type === 'stop' && event.reason ? event.reason : 'Stopped by user request';
        const aborted = AgentError.of('AbortError', reason, 'ABORTED');
        const during = stopPlace(self.getSnapshot()?.value);
        const at = { during, stepCount: context.state.stepCount() };
        return context.state.withPendingToolCallsFailed(aborted).withStopSignal(personStop(reason, at));
      },
    }),
    /** Sets the outcome; a message steered too late for a step is kept for the next execution. */
    completeExecution: assign(({ context }) => {
      const saved = withSteeringSaved(context, context.state);
      return { ...saved, state: saved.state.withExecutionCompleted(now()) };
    }),
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
    assignVersion: assign({
      session: ({ context, event }) =>
        // an intent with no unsafe call saves nothing (null): the version stays
        context.session && {
          ...context.session,
          version: (event as { output?: number | null }).output ?? context.session.version,
        },
    }),
    /** A subagent's intent, saved into this agent's session by the runtime: the version it made. */
    assignSavedVersion: assign({
      session: ({ context, event }) =>
        context.session && event.type === 'session.saved'
          ? { ...context.session, version: event.version }
          : context.session,
    }),
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
    /** Sends the state to the checkpoint worker, to save under the session (`intent`: the step's intent). */
    requestCheckpoint: sendTo('checkpoint', ({ context }, params: { intent: boolean }) => ({
      type: 'work' as const,
      state: context.state,
      token: context.state,
      session: context.session,
      intent: params.intent,
    })),
    /** Aborts an intent save's wait for the tools it looks up (a stop); its answer is dropped. */
    cancelCheckpoint: sendTo('checkpoint', { type: 'cancel' as const }),
    /** Aborts the tool calls in flight (a stop during `tools`); their answer is dropped. */
    cancelTools: sendTo('toolExecutor', { type: 'cancel' as const }),
    /** The hooks worker lives as long as the execution, for an agent that has hooks (an idle one costs). */
    startHooksWorker: assign(({ context, spawn, self }) => {
      if (context.hookStages.length > 0)
        spawn('hooks', { id: 'hooks', input: workerInput({ context, self }) });
      return {};
    }),
    stopHooksWorker: stopChild('hooks'),
    /**
     * Spawns the child agent actor for a subagent call; provided by the runtime, which knows the
     * child (the chart alone throws NotProvidedError).
     */
    spawnSubagent: notProvided('action', 'spawnSubagent'),
    releaseSubagent: stopChild(({ event }) => (event.type === 'subagent.release' ? event.id : '')),
    /** Reports from the actors (tool calls, text deltas) go out to subscribers unchanged. */
  },
});

/**
 * The checkpoint worker lives as long as the execution, for a run that saves (`hasSaveTarget`: a
 * session, or a subagent's caller). Not an `assign`, as the hooks worker's start is: a run that
 * saves nothing makes no snapshot for it. (An extension of its own: `enqueueActions` among the
 * actions it may enqueue would not type-check.)
 */
export const loopActions = contextActions.extend({
  actions: {
    startCheckpointWorker: enqueueActions(({ context, enqueue, self }) => {
      if (hasSaveTarget(context))
        enqueue.spawnChild('checkpoint', { id: 'checkpoint', input: workerInput({ context, self }) });
    }),
    stopCheckpointWorker: enqueueActions(({ context, enqueue }) => {
      if (hasSaveTarget(context)) enqueue.stopChild('checkpoint');
    }),
  },
});

/** The error of a tool call that never ran because the run failed first (`cause` is recorded once, on the step). */
function notRun(cause: AgentError): AgentError {
  return AgentError.of(
    'ToolCallNotRun',
    `Not run: the run failed first (${cause.name}: ${cause.message})`,
    'TOOL_CALL_NOT_RUN',
  );
}

/**
 * `state` with the messages steered in since the last step boundary (`context.steering`) joined to
 * its steering section, and the context's list emptied. Part of the update that records a step or
 * the outcome: an `assign` of its own would cost the machine another snapshot at every step.
 */
function withSteeringSaved(
  context: LoopContext,
  state: AgentState,
): { state: AgentState; steering?: readonly Message[] } {
  if (context.steering.length === 0) return { state };
  return { state: state.withSteeredMessages(context.steering), steering: [] };
}

/** The places of a run a person's stop can interrupt, innermost first (`recordUserStop`'s `during`). */
const STOP_PLACES = [
  'beforeExecution',
  'beforeStep',
  'checkSignals',
  'inference',
  'awaitingApproval',
  'intent',
  'tools',
  'afterStep',
  'record',
  'persist',
  'continueOrStop',
  'failing',
] as const;

/** The place of the run in this state value (`{ inProgress: { step: 'tools' } }`: `tools`). */
function stopPlace(value: unknown): string {
  // a snapshot is not at hand where the machine is only traversed (`machine.transition`)
  const text = JSON.stringify(value ?? null);
  return STOP_PLACES.find((place) => text.includes(`"${place}"`)) ?? 'inProgress';
}
