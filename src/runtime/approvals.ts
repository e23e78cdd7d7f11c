/** Human in the loop at run time: which calls need approval, carrying out decisions, checking edits. */
import type { Hook } from '../hooks/hook';
import type { AgentState } from '../state/agent-state';
import type { ApprovalDecision, ApprovalInput } from '../state/approval';
import { ApprovalError } from '../state/approval-error';
import { InvalidArgumentError } from '../state/errors';
import { type PendingApproval, pendingMatches } from '../state/pending-approval';
import { type ToolSet, toolEffect, validateInput } from '../tools/define-tool';
import { checkSignature } from './approval-signature';

export type { ApprovalInput };

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

/**
 * The step's calls that will run an unsafe tool's `execute` now: no result yet, not rejected. The
 * intent save names them before any starts. A call to a tool not in `tools` counts when `unknownMayBe`
 * (an MCP server's tool not listed yet).
 */
export function unsafeCallsToStart(state: AgentState, tools: ToolSet, unknownMayBe = false): string[] {
  const step = state.currentStep();
  if (!step?.hasToolCalls()) return [];
  const decisions = state.approval()?.decisions ?? {};
  const finished = new Set(step.toolExecutions().map((e) => e.toolCallId()));
  return step
    .requestedToolCalls()
    .filter((call) => {
      if (finished.has(call.id) || decisions[call.id]?.type === 'reject') return false;
      const tool = Object.hasOwn(tools, call.name) ? tools[call.name] : undefined;
      return tool === undefined ? unknownMayBe : toolEffect(tool) === 'unsafe';
    })
    .map((call) => call.id);
}

/** Carries out a person's decisions when the approved step's tools run. */
export const approvalDecisions: Hook = {
  name: 'approvalDecisions',
  beforeToolUse: (state, { toolCall }) => {
    const decision = state.approval()?.decisions[toolCall.id];
    if (decision?.type === 'reject' && state.approval()?.interrupted?.includes(toolCall.id)) {
      return {
        block: `Interrupted: the call was running when the process stopped, so whether it took effect is unknown; it was not run again (rejected by a person${decision.reason ? `: ${decision.reason}` : ''}).`,
      };
    }
    if (decision?.type === 'reject') {
      return { block: `Rejected by a person${decision.reason ? `: ${decision.reason}` : ''}` };
    }
    if (decision?.type === 'edit') return { args: decision.args };
    return undefined;
  },
};

/** Refuses a decision that is not one (InvalidArgumentError naming the field), before anything changes. */
function checkDecision(input: unknown, index: number): asserts input is ApprovalInput {
  const at = `decisions[${index}]`;
  if (typeof input !== 'object' || input === null)
    throw new InvalidArgumentError(
      at,
      'expected { toolCallId, type: "approve" | "reject" | "edit" | "complete", ... }',
    );
  const { toolCallId, type, path, callPath, signature } = input as Record<string, unknown>;
  if (typeof toolCallId !== 'string' || toolCallId === '')
    throw new InvalidArgumentError(
      `${at}.toolCallId`,
      'expected the id of a pending call (a non-empty string)',
    );
  if (type !== 'approve' && type !== 'reject' && type !== 'edit' && type !== 'complete')
    throw new InvalidArgumentError(
      `${at}.type`,
      `${JSON.stringify(type)} is not "approve", "reject", "edit" or "complete"`,
    );
  if (type === 'complete' && (input as { result?: unknown }).result === undefined)
    throw new InvalidArgumentError(`${at}.result`, "expected the call's outcome (a JSON value) to record");
  if (path !== undefined && !(Array.isArray(path) && path.every((name) => typeof name === 'string')))
    throw new InvalidArgumentError(
      `${at}.path`,
      "expected the pending call's path (an array of subagent names)",
    );
  if (callPath !== undefined && !(Array.isArray(callPath) && callPath.every((id) => typeof id === 'string')))
    throw new InvalidArgumentError(
      `${at}.callPath`,
      "expected the pending call's callPath (an array of the ids of the subagent calls leading to it)",
    );
  if (signature !== undefined && typeof signature !== 'string')
    throw new InvalidArgumentError(`${at}.signature`, "expected the pending call's signature (a string)");
}

/** The pending call a decision names, when exactly one does (else `withApprovalDecision` says why not). */
function pendingCall(state: AgentState, input: ApprovalInput): PendingApproval | undefined {
  const matches = pendingMatches(state.pendingApprovals(), input.toolCallId, input);
  return matches.length === 1 ? matches[0] : undefined;
}

/**
 * Checks an edited input against the schema of the tool it is for, in the agent (or the subagent
 * at the call's path) that asked: `toolsAt(path)` gives that agent's tools.
 */
async function checkEdit(
  state: AgentState,
  input: ApprovalInput,
  toolsAt: (path: readonly string[]) => ToolSet,
): Promise<void> {
  if (input.type !== 'edit') return;
  const call = pendingCall(state, input);
  const tools = call && toolsAt(call.path ?? []);
  const tool = call && tools && Object.hasOwn(tools, call.toolName) ? tools[call.toolName] : undefined;
  if (!call || !tool) return; // withApprovalDecision reports the id as not pending
  const result = await validateInput(tool.inputSchema, input.args);
  if (!result.ok) {
    throw new ApprovalError(
      'APPROVAL_INVALID_EDIT',
      `Edited input for tool call '${input.toolCallId}' (${call.toolName}) is invalid: ${result.issues.join('; ')}; nothing was changed.`,
      input.toolCallId,
    );
  }
}

/**
 * The state with `decisions` taken, each checked first (its shape, its signature with a `secret`,
 * an edit against its tool's schema): the first one refused throws, and nothing is taken then.
 * `agent.decide` runs the result; a decide job checks with it before it marks the session.
 */
export async function takeDecisions(
  state: AgentState,
  decisions: readonly ApprovalInput[],
  checks: {
    readonly secret: string | undefined;
    readonly sessionId: string | null;
    readonly toolsAt: (path: readonly string[]) => ToolSet;
  },
): Promise<AgentState> {
  decisions.forEach(checkDecision);
  let decided = state;
  for (const decision of decisions) {
    if (checks.secret) checkSignature(decided, decision, checks.secret, checks.sessionId);
    await checkEdit(decided, decision, checks.toolsAt);
    const { toolCallId, path, callPath, signature: _signature, ...given } = decision;
    // `reconciled` is the runtime's mark (a tool's reconcile settled the call), never a person's
    const { reconciled: _reconciled, ...rest } = given as { reconciled?: unknown };
    decided = decided.withApprovalDecision(toolCallId, rest as ApprovalDecision, { path, callPath });
  }
  return decided;
}
