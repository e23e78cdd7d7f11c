/**
 * A call awaiting approval as the chat's chunks: its tool call id in the chat (`p1/t1` for a call
 * inside subagent call p1) and the chunks that ask the client for a decision. The decisions that
 * come back are read in src/chat/chat-approvals.ts.
 */
import { describePending, type PendingApproval } from '../state/pending-approval';
import type { UIMessageChunk } from './ui-message';

/** The tool call id (and approval id) of a pending call in the chat: `t1`, or `p1/t1` inside subagent call p1. */
export const chatToolCallId = (pending: PendingApproval): string => describePending(pending);

/** The chunks that ask the client for a decision on `pending` (its tool part first, for a nested call). */
export function approvalRequestChunks(pending: PendingApproval): UIMessageChunk[] {
  const toolCallId = chatToolCallId(pending);
  const request: UIMessageChunk = {
    type: 'tool-approval-request',
    approvalId: toolCallId,
    toolCallId,
    ...(pending.signature !== undefined && { signature: pending.signature }),
    approvalDescriptor: { reason: pending.reason },
  };
  if (!pending.callPath?.length) return [request];
  const input: UIMessageChunk = {
    type: 'tool-input-available',
    toolCallId,
    toolName: pending.toolName,
    input: pending.args,
  };
  return [input, request];
}
