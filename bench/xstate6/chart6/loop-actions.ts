/**
 * XState 6 port of machines/loop-actions.ts. Each v5 `assign` becomes a function returning the
 * context patch; `sendTo`, `spawnChild` (spawn inside assign) and `stopChild` become `enq.sendTo`,
 * `enq.spawn` and `enq.stop` on the child refs in `args.children`. Bodies are the v5 ones.
 */
import {
  type LoopContext,
  outputState,
  steeredMessage,
  steeringToApply,
  toDecision,
  workerInput,
} from '../repo/machines/loop-context';
import type { HookStage } from '../repo/machines/worker-protocol';
import { AgentError } from '../repo/src/state/agent-error';
import { AgentStopError } from '../repo/src/state/agent-stop-error';
import { BUDGET_GUARD, budgetSignal } from '../repo/src/state/budget-signal';
import { StopReason } from '../repo/src/state/stop-reason';
import { StopSignal } from '../repo/src/state/stop-signal';

// biome-ignore lint/suspicious/noExplicitAny: the v5 event union and XState 6's refs, read as v5 read them
type Args = { context: LoopContext; event: any; self: any; children: Record<string, any> };
// biome-ignore lint/suspicious/noExplicitAny: XState 6's enqueue object
type Enq = any;

const now = () => Date.now();
/** What `assign` did: XState 6 merges the `context` an action or transition function returns. */
const patch = (context: Partial<LoopContext>) => ({ context });

/** What the workers are made with (the v5 one): the agent actor, and what they need of its context. */
export { workerInput };

function notRun(cause: AgentError): AgentError {
  return AgentError.of(
    'ToolCallNotRun',
    `Not run: the run failed first (${cause.name}: ${cause.message})`,
    'TOOL_CALL_NOT_RUN',
  );
}

const work = (context: LoopContext) => ({
  type: 'work' as const,
  state: context.state,
  token: context.state,
});

export const loopActions = {
  appendUserMessage: ({ context, event }: Args) =>
    patch({
      state: event.type === 'user.message' ? context.state.withUserMessage(event.text) : context.state,
    }),
  keepSteer: ({ context, event }: Args) => {
    const message = steeredMessage(event);
    return patch({ steering: message ? [...context.steering, message] : context.steering });
  },
  saveSteering: ({ context }: Args) =>
    context.steering.length === 0
      ? undefined
      : patch({ state: context.state.withSteeredMessages(context.steering), steering: [] }),
  applySteering: ({ context }: Args) =>
    steeringToApply(context).length === 0
      ? undefined
      : patch({
          state: context.state.withSteeredMessages(context.steering).withSteeringApplied(),
          steering: [],
        }),
  startExecution: ({ context }: Args) =>
    patch({
      state: context.state.withExecutionStarted(now()),
      error: null,
      toolExecutorStarted: false,
    }),
  assignState: ({ event }: Args) => patch({ state: outputState(event) }),
  assignStateForTools: ({ context, event, self }: Args, enq: Enq) => {
    if (context.toolExecutorStarted) return patch({ state: outputState(event) });
    enq.spawn('toolExecutor', { id: 'toolExecutor', input: workerInput({ context, self }) });
    return patch({ state: outputState(event), toolExecutorStarted: true });
  },
  startToolExecutor: ({ context, self }: Args, enq: Enq) => {
    if (context.toolExecutorStarted) return undefined;
    enq.spawn('toolExecutor', { id: 'toolExecutor', input: workerInput({ context, self }) });
    return patch({ toolExecutorStarted: true });
  },
  stopToolExecutor: ({ children }: Args, enq: Enq) => enq.stop(children.toolExecutor),
  startStep: ({ context }: Args) => {
    const at = now();
    const started = context.state.withStepStarted(at);
    const signal = budgetSignal(context.budget, started, at);
    return patch({ state: signal ? started.withStopSignal(signal) : started });
  },
  stopOverBudget: ({ context }: Args) => {
    const signal = budgetSignal(context.budget, context.state, now());
    const raised = context.state
      .execution()
      ?.continuation()
      .stopSignals.some((s) => s.source === BUDGET_GUARD && s.context.limit === signal?.context.limit);
    const state = signal && !raised ? context.state.withStopSignal(signal) : context.state;
    return patch({ state: state.withContinuationRequested(false) });
  },
  recordStep: ({ context }: Args) =>
    patch({
      state: (context.checkStep ? context.checkStep(context.state) : context.state).withCurrentStepRecorded(
        now(),
      ),
    }),
  recordStopRequest: ({ context, event }: Args, _enq: Enq, params?: { withoutStep?: boolean }) => {
    const error = (event as { error?: AgentStopError }).error;
    const state = params?.withoutStep ? context.state : (error?.state ?? context.state);
    return patch({ state: state.withStopSignal(AgentStopError.toSignal(error)) });
  },
  recordCheckpointFailure: ({ context, event }: Args) => {
    const error = AgentError.from((event as { error?: unknown }).error);
    const waitingChildren = Object.keys(context.state.approval()?.children ?? {}).length > 0;
    const state = waitingChildren ? context.state.withPendingToolCallsFailed(notRun(error)) : context.state;
    return patch({ state: state.withFailure(error, StopReason.ErrorForbade, 'checkpoint'), error });
  },
  recordFailure: ({ context, event }: Args, _enq: Enq, params?: { inStep?: boolean }) => {
    const error = AgentError.from((event as { error?: unknown }).error);
    const state = context.state.withPendingToolCallsFailed(notRun(error));
    return patch({ state: state.withFailure(error, StopReason.ErrorForbade, 'agent-loop', params), error });
  },
  keepSettledToolCalls: () => undefined,
  recordUserStop: ({ context, event }: Args) => {
    const reason = event.type === 'stop' && event.reason ? event.reason : 'Stopped by user request';
    const aborted = AgentError.of('AbortError', reason, 'ABORTED');
    return patch({
      state: context.state
        .withPendingToolCallsFailed(aborted)
        .withStopSignal(StopSignal.userRequested(reason)),
    });
  },
  completeExecution: ({ context }: Args) => patch({ state: context.state.withExecutionCompleted(now()) }),
  recordDecision: ({ context, event }: Args) =>
    patch({
      state: context.state.withApprovalDecision(...toDecision(event)),
    }),
  recordApprovalTimeout: ({ context }: Args) =>
    patch({
      state: context.state
        .withPendingToolCallsFailed(
          AgentError.of('ApprovalTimeout', 'No decision before the time budget ran out', 'APPROVAL_TIMEOUT'),
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
  assignVersion: ({ context, event }: Args) =>
    patch({
      session: context.session && {
        ...context.session,
        version: (event as { output?: number | null }).output ?? context.session.version,
      },
    }),
  requestInference: ({ context, children }: Args, enq: Enq) => enq.sendTo(children.driver, work(context)),
  requestTools: ({ context, children }: Args, enq: Enq) => enq.sendTo(children.toolExecutor, work(context)),
  requestHooks: ({ context, children }: Args, enq: Enq, params: { stage: HookStage }) =>
    enq.sendTo(children.hooks, {
      type: 'work' as const,
      stage: params.stage,
      state: context.state,
      error: params.stage === 'onError' ? context.error : null,
      token: context.state,
    }),
  cancelHooks: ({ children }: Args, enq: Enq) => enq.sendTo(children.hooks, { type: 'cancel' as const }),
  cancelTools: ({ children }: Args, enq: Enq) =>
    enq.sendTo(children.toolExecutor, { type: 'cancel' as const }),
  startHooksWorker: ({ context, self }: Args, enq: Enq) => {
    if (context.hookStages.length > 0)
      enq.spawn('hooks', { id: 'hooks', input: workerInput({ context, self }) });
  },
  stopHooksWorker: ({ children }: Args, enq: Enq) => enq.stop(children.hooks),
  spawnSubagent: () => undefined,
  releaseSubagent: ({ event, children }: Args, enq: Enq) =>
    enq.stop(event.type === 'subagent.release' ? children[event.id] : undefined),
};
