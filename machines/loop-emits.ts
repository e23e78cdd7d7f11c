/** The events the agent machine emits (`actor.on(type, listener)`), from its context. */
import { emit, enqueueActions } from 'xstate';
import { AgentError } from '../src/state/agent-error';
import { approvalReasonOf } from '../src/state/approval';
import { ApprovalError, decisionRefused } from '../src/state/approval-error';
import { InvalidArgumentError, kindOf, NoRunInProgressError, RunInProgressError } from '../src/state/errors';
import { eventIds, type ReportEvent } from '../src/state/loop-events';
import { loopActions } from './loop-actions';
import { routeOf, steeringToApply, toDecision } from './loop-context';

export const loopImplementations = loopActions.extend({
  actions: {
    emitApprovalRequested: emit(({ context }) => ({
      type: 'approval.requested' as const,
      ...eventIds(context.state),
      stepNumber: context.state.stepCount() + 1,
      toolCalls: context.state.pendingApprovals(),
    })),
    emitApprovalDecided: emit(({ context, event }) => {
      const [toolCallId, decision, route] = toDecision(event);
      const reason = approvalReasonOf(context.state, toolCallId, route);
      return {
        type: 'approval.decided' as const,
        ...eventIds(context.state),
        stepNumber: context.state.stepCount() + 1,
        toolCallId,
        decision,
        ...route,
        ...(reason ? { reason } : {}),
      };
    }),
    /** An event the agent cannot take now (a decision for a call that is not pending, a message mid-approval). */
    refuseEvent: emit(({ context, event }) => {
      const error =
        'toolCallId' in event
          ? decisionRefused(context.state.pendingApprovals(), event.toolCallId, routeOf(event))
          : ApprovalError.pending(context.state);
      return {
        type: 'event.refused' as const,
        ...eventIds(context.state),
        event: event.type,
        error: AgentError.from(error),
      };
    }),
    /** `user.message` or `execute` while a run is in progress: refused out loud, never dropped. */
    refuseWhileRunning: emit(({ context, event }) => ({
      type: 'event.refused' as const,
      ...eventIds(context.state),
      event: event.type,
      error: AgentError.from(new RunInProgressError(event.type, context.state.executionId())),
    })),
    /** A `user.message` without text: refused out loud (appending it would fail the actor). */
    refuseUserMessage: emit(({ context, event }) => ({
      type: 'event.refused' as const,
      ...eventIds(context.state),
      event: event.type,
      error: AgentError.from(
        new InvalidArgumentError(
          'user.message.text',
          `expected a string, got ${kindOf((event as { text?: unknown }).text)} (send { type: 'user.message', text: '...' })`,
        ),
      ),
    })),
    /** A `steer` outside a run, or one without a message: refused out loud, never dropped. */
    refuseSteer: emit(({ context, event }, params?: { running?: boolean }) => ({
      type: 'event.refused' as const,
      ...eventIds(context.state),
      event: event.type,
      error: AgentError.from(
        params?.running
          ? new InvalidArgumentError(
              'steer.message',
              'is neither text nor a Message (send { type: "steer", message: Message.user(text) } or plain text)',
            )
          : new NoRunInProgressError(event.type),
      ),
    })),
    /**
     * At a step boundary: every steered message joins the conversation, for the step that starts,
     * each announced by a `message.steered`. Nothing steered (most steps): no context update, so
     * the machine makes no snapshot for it.
     */
    applySteering: enqueueActions(({ context, enqueue }) => {
      const messages = steeringToApply(context);
      if (messages.length === 0) return;
      for (const message of messages)
        enqueue.emit({
          type: 'message.steered' as const,
          ...eventIds(context.state),
          stepNumber: context.state.stepCount() + 1,
          message,
        });
      enqueue.assign({
        state: context.state.withSteeredMessages(context.steering).withSteeringApplied(),
        steering: [],
      });
    }),
    // The events of every step are literals, not spreads of `eventIds`: a spread followed by keys
    // gives each event a hidden class of its own on Node 20 (#50).
    emitExecutionStarted: emit(({ context: { state } }) => ({
      type: 'execution.started' as const,
      agentId: state.agentId(),
      parentAgentId: state.parentAgentId(),
      executionId: state.executionId() ?? '',
    })),
    emitStepStarted: emit(({ context: { state } }) => ({
      type: 'step.started' as const,
      agentId: state.agentId(),
      parentAgentId: state.parentAgentId(),
      executionId: state.executionId() ?? '',
      stepNumber: state.stepCount() + 1,
    })),
    emitStepFinished: emit(({ context }) => {
      const { state } = context;
      const step = state.lastStepExecution();
      return {
        type: 'step.finished' as const,
        agentId: state.agentId(),
        parentAgentId: state.parentAgentId(),
        executionId: state.executionId() ?? '',
        stepNumber: state.stepCount(),
        stepId: step?.id() ?? '',
        stepType: step?.step().stepType() ?? 'final_response',
        finishReason: step?.step().finishReason() ?? null,
        usage: step?.usage() ?? context.state.usage(),
        errors: step?.step().errors() ?? [],
        durationMs: (step?.duration() ?? 0) * 1000,
      };
    }),
    emitContinuationEvaluated: emit(({ context }) => {
      const { state } = context;
      const signal = state.stopSignal();
      return {
        type: 'continuation.evaluated' as const,
        agentId: state.agentId(),
        parentAgentId: state.parentAgentId(),
        executionId: state.executionId() ?? '',
        stepNumber: state.stepCount(),
        shouldStop: context.state.shouldStop(),
        stopSignal: signal,
        stopReason: signal?.reason ?? null,
        source: signal?.source ?? null,
      };
    }),
    emitError: emit(({ context }) => ({
      type: 'error' as const,
      ...eventIds(context.state),
      stepNumber: context.state.stepCount(),
      error: context.error ?? AgentError.of('Error', 'unknown error'),
    })),
    emitExecutionFinished: emit(({ context: { state } }) => ({
      type: 'execution.finished' as const,
      agentId: state.agentId(),
      parentAgentId: state.parentAgentId(),
      executionId: state.executionId() ?? '',
      status: state.status(),
      stopReason: state.stopReason(),
      stepCount: state.stepCount(),
      usage: state.usage(),
    })),
    forwardReport: emit(({ event }) => event as ReportEvent),
  },
});
