/** Human in the loop at run time: which calls need approval, carrying out decisions, checking edits. */
import type { Hook } from '../hooks/hook';
import type { AgentState } from '../state/agent-state';
import { ApprovalError } from '../state/approval';
import { type ToolSet, validateInput } from '../tools/define-tool';

export type { ApprovalInput } from '../state/approval';

/** Marks the calls of a new step whose tools need a person's approval. */
export async function requestApprovals(state: AgentState, tools: ToolSet): Promise<AgentState> {
  const step = state.currentStep();
  if (!step?.hasToolCalls()) return state;
  const ids: string[] = [];
  for (const call of step.requestedToolCalls()) {
    const rule = Object.hasOwn(tools, call.name) ? tools[call.name]?.needsApproval : undefined;
    const needed =
      typeof rule === 'function'
        ? await rule(call.args, { toolCallId: call.id, state, messages: [...state.messages()], context: {} })
        : rule === true;
    if (needed) ids.push(call.id);
  }
  return ids.length ? state.withApprovalRequested(ids) : state;
}

/** Carries out a person's decisions when the approved step's tools run. */
export const approvalDecisions: Hook = {
  name: 'approvalDecisions',
  beforeToolUse: (state, { toolCall }) => {
    const decision = state.approval()?.decisions[toolCall.id];
    if (decision?.type === 'reject') {
      return { block: `Rejected by a person${decision.reason ? `: ${decision.reason}` : ''}` };
    }
    if (decision?.type === 'edit') return { args: decision.args };
    return undefined;
  },
};

export async function checkEdit(
  state: AgentState,
  toolCallId: string,
  args: unknown,
  tools: ToolSet,
): Promise<void> {
  const call = state
    .currentStep()
    ?.requestedToolCalls()
    .find((c) => c.id === toolCallId);
  const tool = call && Object.hasOwn(tools, call.name) ? tools[call.name] : undefined;
  if (!call || !tool) return; // withApprovalDecision reports the id as not pending
  const result = await validateInput(tool.inputSchema, args);
  if (!result.ok) {
    throw new ApprovalError(
      'APPROVAL_INVALID_EDIT',
      `Edited input for tool call '${toolCallId}' (${call.name}) is invalid: ${result.issues.join('; ')}; nothing was changed.`,
      toolCallId,
    );
  }
}

export function approvalPending(state: AgentState): ApprovalError {
  const pending = state.pendingApprovals().map((p) => p.toolCallId);
  return new ApprovalError(
    'APPROVAL_PENDING',
    `The run waits for approval of ${pending.join(', ') || 'its tool calls'}: deliver the decisions with agent.decide(state, decisions) before a new message or execution.`,
  );
}
