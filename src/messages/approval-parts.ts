/**
 * The tool parts of calls awaiting approval in a chat's UI messages, the calls of its subagents
 * included: a call inside a subagent has the tool call id `p1/t1` (the ids of the subagent calls
 * leading to it, then its own), and its approval id is that tool call id; with an
 * `approvalSecret`, the approval carries the call's signature.
 */
import type { AgentState } from '../state/agent-state';
import type { ApprovalDecision, ApprovalRequest } from '../state/approval';
import type { ToolCall } from '../state/message';
import { type ApprovalReason, approvalKey } from '../state/pending-approval';
import type { UIToolPart } from './ui-parts';

/**
 * The tool parts of the calls waiting (or decided and still waiting for the others) inside the
 * subagent call `call` of the root state's waiting step, at any depth.
 */
export function nestedApprovalParts(root: AgentState, call: ToolCall): UIToolPart[] {
  const approval = root.approval();
  const child = approval?.children[call.id];
  if (!approval || !child) return [];
  const parts: UIToolPart[] = [];
  collect(child, [call.id], approval.signatures, parts);
  return parts;
}

function collect(
  state: AgentState,
  callPath: readonly string[],
  signatures: ApprovalRequest['signatures'],
  out: UIToolPart[],
): void {
  const approval = state.approval();
  for (const call of state.currentStep()?.requestedToolCalls() ?? []) {
    if (!approval) return;
    if (approval.toolCallIds.includes(call.id)) {
      const signature = signatures[approvalKey(callPath, call.id)];
      out.push(
        approvalPart(
          { type: `tool-${call.name}`, toolCallId: [...callPath, call.id].join('/'), input: call.args },
          approval.decisions[call.id],
          signature,
          approval.interrupted?.includes(call.id) ? 'interrupted' : 'approval',
        ),
      );
    }
    const child = approval.children[call.id];
    if (child) collect(child, [...callPath, call.id], signatures, out);
  }
}

/** A call's part awaiting approval (`waits` says why), or answered when a decision on it was taken. */
export function approvalPart(
  tool: { type: `tool-${string}`; toolCallId: string; input: unknown },
  decision: ApprovalDecision | undefined,
  signature: string | undefined,
  waits: ApprovalReason = 'approval',
): UIToolPart {
  const signed = signature === undefined ? {} : { signature };
  if (!decision) {
    // the reason as AI SDK 6's and 7's clients keep it from the stream's tool-approval-request
    const why = { descriptor: { reason: waits } };
    return Object.assign(tool, {
      state: 'approval-requested' as const,
      approval: Object.assign({ id: tool.toolCallId }, why, signed),
    });
  }
  const reason = decision.type === 'reject' ? decision.reason : undefined;
  return Object.assign(tool, {
    state: 'approval-responded' as const,
    approval: Object.assign(
      { id: tool.toolCallId, approved: decision.type !== 'reject' },
      reason ? { reason } : {},
      signed,
    ),
  });
}
