import { AgentMachineError } from './errors';
import {
  type ApprovalRoute,
  describePending,
  type PendingApproval,
  pendingMatches,
} from './pending-approval';

type ApprovalErrorCode =
  | 'APPROVAL_NOT_PENDING'
  | 'APPROVAL_INVALID_EDIT'
  | 'APPROVAL_INVALID_RESULT'
  | 'APPROVAL_PENDING'
  | 'APPROVAL_AMBIGUOUS'
  | 'APPROVAL_SIGNATURE_INVALID';

/** A decision the run cannot take: the id is not pending, or edited arguments are invalid. */
export class ApprovalError extends AgentMachineError {
  static override get name(): string {
    return 'ApprovalError';
  }

  constructor(
    code: ApprovalErrorCode,
    message: string,
    readonly toolCallId: string | null = null,
    /** APPROVAL_PENDING: the ids of the calls to decide on (a call inside a subagent as `callPath/id`). */
    readonly pendingApprovals: readonly string[] = [],
  ) {
    super(code, message);
  }

  /**
   * The refusal of a new message or execution while the run waits for decisions (APPROVAL_PENDING),
   * the same from the agent's actor, `execute`, `chat` and the chat handler.
   */
  static pending(state: { pendingApprovals(): readonly PendingApproval[] }): ApprovalError {
    const pending = state.pendingApprovals().map(describePending);
    const named = pending.map((id) => `'${id}'`).join(', ') || 'its tool calls';
    return new ApprovalError(
      'APPROVAL_PENDING',
      `The run waits for a decision on ${pending.length > 1 ? 'approvals' : 'approval'} ${named} ` +
        '(a call inside a subagent as callPath/id): approve or deny each first (agent.decide(state, ' +
        "decisions), or the approve/reject/edit events; in a chat, the AI SDK's " +
        'addToolApprovalResponse({ id, approved }), then sendMessage()), and send this message again ' +
        'once the answer has finished.',
      null,
      pending,
    );
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

/** Why a decision on `toolCallId` (at `route`) cannot be taken: no pending call, or several, match it. */
export function decisionRefused(
  pending: readonly PendingApproval[],
  toolCallId: string,
  route?: ApprovalRoute | readonly string[],
): ApprovalError {
  const matches = pendingMatches(pending, toolCallId, route);
  if (matches.length <= 1) return ApprovalError.notPending(toolCallId, pending.map(describePending));
  return new ApprovalError(
    'APPROVAL_AMBIGUOUS',
    `Tool call id '${toolCallId}' is pending in more than one place (${matches
      .map((p) => `callPath ${JSON.stringify(p.callPath ?? [])} in ${(p.path ?? []).join('/') || '(root)'}`)
      .join(
        ', ',
      )}); give the decision the 'callPath' of the one you mean, as pendingApprovals() lists it. Nothing was changed.`,
    toolCallId,
  );
}
