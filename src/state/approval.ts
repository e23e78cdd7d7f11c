import { AgentMachineError } from './errors';
import { toJsonValue } from './json-value';
import type { ToolCall } from './message';

/** A person's decision on one tool call awaiting approval. */
export type ApprovalDecision =
  | { readonly type: 'approve' }
  | { readonly type: 'reject'; readonly reason?: string }
  | { readonly type: 'edit'; readonly args: unknown };

/** Tool calls of the step in flight that wait for a person, and the decisions taken so far. */
export interface ApprovalRequest {
  readonly requestedAt: number;
  /** The calls that need a decision, in the model's order. */
  readonly toolCallIds: readonly string[];
  readonly decisions: Readonly<Record<string, ApprovalDecision>>;
}

/** A pending call as `state.pendingApprovals()` lists it. */
export interface PendingApproval {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly args: unknown;
}

/** A decision the run cannot take: the id is not pending, or edited arguments are invalid. */
export class ApprovalError extends AgentMachineError {
  constructor(
    code: 'APPROVAL_NOT_PENDING' | 'APPROVAL_INVALID_EDIT' | 'APPROVAL_PENDING',
    message: string,
    readonly toolCallId: string | null = null,
  ) {
    super(code, message);
  }

  static notPending(toolCallId: string, pending: readonly string[]): ApprovalError {
    const open = pending.length ? `pending: ${pending.join(', ')}` : 'no call is pending';
    return new ApprovalError(
      'APPROVAL_NOT_PENDING',
      `Tool call '${toolCallId}' is not awaiting approval (${open}); nothing was changed.`,
      toolCallId,
    );
  }
}

export const ApprovalRequest = {
  of(toolCallIds: readonly string[], requestedAt = Date.now()): ApprovalRequest {
    return Object.freeze({
      requestedAt,
      toolCallIds: Object.freeze([...toolCallIds]),
      decisions: Object.freeze({}),
    });
  },
  undecided(request: ApprovalRequest): string[] {
    return request.toolCallIds.filter((id) => !Object.hasOwn(request.decisions, id));
  },
  withDecision(request: ApprovalRequest, toolCallId: string, decision: ApprovalDecision): ApprovalRequest {
    const pending = ApprovalRequest.undecided(request);
    if (!pending.includes(toolCallId)) throw ApprovalError.notPending(toolCallId, pending);
    // Edited input enters the state here: kept as its JSON form, refused if that cannot be saved.
    const kept: ApprovalDecision =
      decision.type === 'edit'
        ? Object.freeze({
            type: 'edit',
            args: toJsonValue(decision.args, `The edited input of '${toolCallId}'`),
          })
        : decision;
    return Object.freeze({
      ...request,
      decisions: Object.freeze({ ...request.decisions, [toolCallId]: kept }),
    });
  },
  pending(request: ApprovalRequest, calls: readonly ToolCall[]): PendingApproval[] {
    const undecided = new Set(ApprovalRequest.undecided(request));
    return calls
      .filter((c) => undecided.has(c.id))
      .map((c) => ({ toolCallId: c.id, toolName: c.name, args: c.args }));
  },
};

/** A decision as `agent.decide()` takes it: the tool call it is for, and the decision. */
export type ApprovalInput = { readonly toolCallId: string } & ApprovalDecision;
