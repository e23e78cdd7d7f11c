/**
 * Calls awaiting approval in a chat: each is a tool part of the assistant message, its subagents'
 * calls included, and the approvals the chat client sends back become the decisions `agent.decide`
 * takes. A call inside a subagent has the tool call id `p1/t1` in the chat (the ids of the subagent
 * calls leading to it, then its own), so that two subagent calls waiting on the same id are two
 * parts. The approval id is that tool call id; with an `approvalSecret`, the approval carries the
 * call's signature (the protocol's `signature` field, which the client sends back unchanged).
 * The parts that show them in the chat's messages are in src/messages/approval-parts.ts.
 */
import { toUIMessages } from '../messages/ui-messages';
import type { AgentState } from '../state/agent-state';
import type { ApprovalDecision, ApprovalInput } from '../state/approval';
import { chatToolCallId } from '../ui/approval-chunks';
import type { UIMessageChunk } from '../ui/ui-message';
import { toUIMessageChunks } from '../ui/ui-message-chunks';
import { type ChatDecision, ChatRequestError } from './chat-request';

/**
 * The decisions for the approvals a chat client answered: each names a pending call by its chat
 * tool call id, and with an `approvalSecret` carries the signature the request gave it (checked
 * here, and again by `agent.decide` over the call as stored). A ChatRequestError (409) says which
 * approval is not pending or not signed as asked, and nothing is decided then.
 */
export function toApprovalInputs(state: AgentState, decisions: readonly ChatDecision[]): ApprovalInput[] {
  const pending = state.pendingApprovals();
  return decisions.map((answer) => {
    const call = pending.find((p) => chatToolCallId(p) === answer.toolCallId);
    if (!call) {
      const open = pending.map(chatToolCallId);
      throw new ChatRequestError(
        'APPROVAL_NOT_PENDING',
        `Approval '${answer.toolCallId}' is not awaiting a decision (${
          open.length ? `pending: ${open.join(', ')}` : 'no call is pending'
        }); reload the chat's messages and answer those. Nothing was changed.`,
      );
    }
    if (call.signature !== undefined && answer.signature !== call.signature) {
      throw new ChatRequestError(
        'APPROVAL_SIGNATURE_INVALID',
        `Approval '${answer.toolCallId}' ${
          answer.signature === undefined ? 'carries no signature' : 'carries a signature that does not match'
        }: send the approval back with the 'signature' its tool-approval-request gave, unaltered. Nothing was changed.`,
      );
    }
    const decision: ApprovalDecision = answer.approved
      ? { type: 'approve' }
      : { type: 'reject', ...(answer.reason ? { reason: answer.reason } : {}) };
    return Object.assign(
      { toolCallId: call.toolCallId },
      call.callPath ? { callPath: call.callPath } : {},
      call.signature !== undefined ? { signature: call.signature } : {},
      decision,
    );
  });
}

/**
 * How the stream of a run that takes `decisions` goes on with the assistant message the client
 * holds (plain data, so it can travel in a job): the message's id, the calls whose inputs the
 * client has, the calls denied, and the chunks of the message as decided (a replay's start).
 */
export interface DecisionContinuation {
  readonly messageId: string;
  readonly toolCallIds: readonly string[];
  readonly denied: readonly string[];
  readonly prefix: readonly UIMessageChunk[];
}

export function decisionContinuation(
  state: AgentState,
  inputs: readonly ApprovalInput[],
  decisions: readonly ChatDecision[],
): DecisionContinuation {
  let decided = state;
  for (const { toolCallId, path: _path, callPath, signature: _signature, ...decision } of inputs)
    decided = decided.withApprovalDecision(toolCallId, decision as ApprovalDecision, { callPath });
  const messageId = state.executionId() ?? '';
  const message = toUIMessages(decided).find((m) => m.id === messageId);
  return {
    messageId,
    toolCallIds: [
      ...(state
        .currentStep()
        ?.requestedToolCalls()
        .map((c) => c.id) ?? []),
      ...state.pendingApprovals().map(chatToolCallId),
    ],
    denied: decisions.filter((d) => !d.approved).map((d) => d.toolCallId),
    prefix: message ? toUIMessageChunks(message) : [],
  };
}

/** A decision continuation as an AgentStream goes on with it (its denied calls as a set). */
export function streamContinuation({
  denied,
  ...continuation
}: DecisionContinuation): Omit<DecisionContinuation, 'denied'> & { readonly denied: ReadonlySet<string> } {
  return { ...continuation, denied: new Set(denied) };
}
