/** XState 6 port of machines/loop-emits.ts: each v5 `emit(...)` becomes `enq.emit(...)`; bodies unchanged. */
import { type LoopContext, routeOf, steeringToApply, toDecision } from '../repo/machines/loop-context';
import { AgentError } from '../repo/src/state/agent-error';
import { approvalReasonOf } from '../repo/src/state/approval';
import { ApprovalError, decisionRefused } from '../repo/src/state/approval-error';
import { InvalidArgumentError, NoRunInProgressError, RunInProgressError } from '../repo/src/state/errors';
import { eventIds, type ReportEvent } from '../repo/src/state/loop-events';

// biome-ignore lint/suspicious/noExplicitAny: the v5 event union, read as v5 read it
type Args = { context: LoopContext; event: any };
// biome-ignore lint/suspicious/noExplicitAny: XState 6's enqueue object
type Enq = any;

export const loopEmits = {
  emitApprovalRequested: ({ context }: Args, enq: Enq) =>
    enq.emit({
      type: 'approval.requested' as const,
      ...eventIds(context.state),
      stepNumber: context.state.stepCount() + 1,
      toolCalls: context.state.pendingApprovals(),
    }),
  emitApprovalDecided: ({ context, event }: Args, enq: Enq) => {
    const [toolCallId, decision, route] = toDecision(event);
    const reason = approvalReasonOf(context.state, toolCallId, route);
    enq.emit({
      type: 'approval.decided' as const,
      ...eventIds(context.state),
      stepNumber: context.state.stepCount() + 1,
      toolCallId,
      decision,
      ...route,
      ...(reason ? { reason } : {}),
    });
  },
  refuseEvent: ({ context, event }: Args, enq: Enq) => {
    const error =
      'toolCallId' in event
        ? decisionRefused(context.state.pendingApprovals(), event.toolCallId, routeOf(event))
        : ApprovalError.pending(context.state);
    enq.emit({
      type: 'event.refused' as const,
      ...eventIds(context.state),
      event: event.type,
      error: AgentError.from(error),
    });
  },
  refuseWhileRunning: ({ context, event }: Args, enq: Enq) =>
    enq.emit({
      type: 'event.refused' as const,
      ...eventIds(context.state),
      event: event.type,
      error: AgentError.from(new RunInProgressError(event.type, context.state.executionId())),
    }),
  refuseSteer: ({ context, event }: Args, enq: Enq, params?: { running?: boolean }) =>
    enq.emit({
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
    }),
  emitMessagesSteered: ({ context }: Args, enq: Enq) => {
    for (const message of steeringToApply(context))
      enq.emit({
        type: 'message.steered' as const,
        ...eventIds(context.state),
        stepNumber: context.state.stepCount() + 1,
        message,
      });
  },
  emitExecutionStarted: ({ context }: Args, enq: Enq) =>
    enq.emit({ type: 'execution.started' as const, ...eventIds(context.state) }),
  emitStepStarted: ({ context }: Args, enq: Enq) =>
    enq.emit({
      type: 'step.started' as const,
      ...eventIds(context.state),
      stepNumber: context.state.stepCount() + 1,
    }),
  emitStepFinished: ({ context }: Args, enq: Enq) => {
    const step = context.state.lastStepExecution();
    enq.emit({
      type: 'step.finished' as const,
      ...eventIds(context.state),
      stepNumber: context.state.stepCount(),
      stepId: step?.id() ?? '',
      stepType: step?.step().stepType() ?? 'final_response',
      finishReason: step?.step().finishReason() ?? null,
      usage: step?.usage() ?? context.state.usage(),
      errors: step?.step().errors() ?? [],
      durationMs: (step?.duration() ?? 0) * 1000,
    });
  },
  emitContinuationEvaluated: ({ context }: Args, enq: Enq) => {
    const signal = context.state.stopSignal();
    enq.emit({
      type: 'continuation.evaluated' as const,
      ...eventIds(context.state),
      stepNumber: context.state.stepCount(),
      shouldStop: context.state.shouldStop(),
      stopSignal: signal,
      stopReason: signal?.reason ?? null,
      source: signal?.source ?? null,
    });
  },
  emitError: ({ context }: Args, enq: Enq) =>
    enq.emit({
      type: 'error' as const,
      ...eventIds(context.state),
      stepNumber: context.state.stepCount(),
      error: context.error ?? AgentError.of('Error', 'unknown error'),
    }),
  emitExecutionFinished: ({ context }: Args, enq: Enq) =>
    enq.emit({
      type: 'execution.finished' as const,
      ...eventIds(context.state),
      status: context.state.status(),
      stopReason: context.state.stopReason(),
      stepCount: context.state.stepCount(),
      usage: context.state.usage(),
    }),
  forwardReport: ({ event }: Args, enq: Enq) => enq.emit(event as ReportEvent),
};
