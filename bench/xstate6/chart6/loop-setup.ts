/**
 * XState 6 port of machines/loop-setup.ts: the actors the chart invokes (by name; provided by the
 * caller with `provide({ actors })`), its delay and its guards. The guards are the v5 ones
 * unchanged, but for their signature: `(args, params)`, called by the transition functions (when.ts).
 */
import { createAsyncLogic, createCallbackLogic, setup, types } from 'xstate';
import {
  type LoopContext,
  type LoopInput,
  outputState,
  pendingSteering,
  routeOf,
  steeredMessage,
  timeLimitOf,
} from '../repo/machines/loop-context';
import type { HookStage } from '../repo/machines/worker-protocol';
import { AgentStopError } from '../repo/src/state/agent-stop-error';
import { budgetSignal } from '../repo/src/state/budget-signal';
import { ExecutionStatus } from '../repo/src/state/execution-status';
import { pendingMatches } from '../repo/src/state/pending-approval';
import { StopReason } from '../repo/src/state/stop-reason';
import { loopActions } from './loop-actions';
import { loopEmits } from './loop-emits';

const notProvided = (name: string) => (): never => {
  throw new Error(`The '${name}' actor is not provided: create the agent with createAgent()`);
};

// biome-ignore lint/suspicious/noExplicitAny: the v5 event union, read as the v5 guards read it
type Args = { context: LoopContext; event: any };

export const loopSetup = setup({
  schemas: { context: types<LoopContext>(), input: types<LoopInput>() },
  actors: {
    hooks: createCallbackLogic(notProvided('hooks')),
    driver: createCallbackLogic(notProvided('driver')),
    toolExecutor: createCallbackLogic(notProvided('toolExecutor')),
    checkpoint: createAsyncLogic({ run: async () => notProvided('checkpoint')() }),
    intentCheckpoint: createAsyncLogic({ run: async () => notProvided('intentCheckpoint')() }),
  },
  delays: {
    approvalTimeout: ({ context }: { context: LoopContext }) =>
      Math.min(timeLimitOf(context) ?? 2_147_483_647, 2_147_483_647),
  },
  actions: { ...loopActions, ...loopEmits },
  guards: {
    shouldStop: ({ context }: Args) => context.state.shouldStop(),
    stopSignalled: ({ context }: Args) => context.state.execution()?.continuation().shouldStop() ?? false,
    overBudget: ({ context }: Args) => budgetSignal(context.budget, context.state, Date.now()) !== null,
    hasHooks: ({ context }: Args, params: { stage: HookStage }) => context.hookStages.includes(params.stage),
    isStale: ({ context, event }: Args) =>
      'token' in event && event.token !== undefined && event.token !== context.state,
    hasToolCalls: ({ event }: Args) => outputState(event).currentStep()?.hasToolCalls() ?? false,
    isStopRequest: ({ event }: Args) => AgentStopError.is((event as { error?: unknown }).error),
    userStopped: ({ context }: Args) =>
      context.state
        .execution()
        ?.continuation()
        .stopSignals.some((s) => s.reason === StopReason.UserRequested) ?? false,
    hasSession: ({ context }: Args) => context.session !== null,
    startsUnsafeCalls: () => false,
    awaitsApproval: ({ context }: Args) => context.state.approval() !== null,
    endedWhenSaved: ({ context }: Args) =>
      context.state.status() === ExecutionStatus.InProgress &&
      context.state.stepCount() > 0 &&
      context.state.currentStep() === null &&
      context.state.shouldStop() &&
      context.state.steeredMessages().length === 0,
    asksApproval: ({ event }: Args) => outputState(event).approval() !== null,
    isPendingCall: ({ context, event }: Args) =>
      'toolCallId' in event &&
      pendingMatches(context.state.pendingApprovals(), event.toolCallId, routeOf(event)).length === 1,
    allDecided: ({ context }: Args) => context.state.pendingApprovals().length === 0,
    timeBudgetExhausted: ({ context }: Args) => timeLimitOf(context) === 0,
    hasTimeLimit: ({ context }: Args) => timeLimitOf(context) !== null,
    carriesMessage: ({ event }: Args) => steeredMessage(event) !== null,
    steeredAfterAnswer: ({ context }: Args) =>
      pendingSteering(context).length > 0 &&
      !(context.state.execution()?.continuation().hasStopSignals() ?? false),
    isFailed: ({ context }: Args) => context.state.status() === ExecutionStatus.Failed,
    isStopped: ({ context }: Args) => context.state.status() === ExecutionStatus.Stopped,
  },
});
