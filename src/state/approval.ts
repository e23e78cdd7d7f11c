import { ApprovalError, decisionRefused } from './approval-error';
import { toJsonValue } from './json-value';
import type { ToolCall } from './message';
import type { NestedAgentState } from './nested-state';
import {
  type ApprovalReason,
  type ApprovalRoute,
  approvalKey,
  describePending,
  type PendingApproval,
  pendingMatches,
} from './pending-approval';

// AgentState, named through nested-state.ts: agent-state.ts imports this file.
type AgentState = NestedAgentState;

/** A person's decision on one tool call awaiting approval. */
export type ApprovalDecision =
  /** `reconciled`: set by the runtime when the tool's reconcile answered `'not-done'` (no person asked). */
  | { readonly type: 'approve'; readonly reconciled?: true }
  | { readonly type: 'reject'; readonly reason?: string }
  | { readonly type: 'edit'; readonly args: unknown }
  /**
   * An interrupted call's outcome, given by a person: recorded as its result, the call not run
   * (`reconciled`: given by the tool's reconcile answering `'done'`, set by the runtime).
   */
  | { readonly type: 'complete'; readonly result: unknown; readonly reconciled?: true };

/**
 * Tool calls of the step in flight that wait for a person, and the decisions taken so far. A step
 * whose subagent calls wait for decisions inside their children keeps each child's waiting state
 * here (`children`), so that the caller's checkpoint holds the whole waiting tree.
 */
export interface ApprovalRequest {
  readonly requestedAt: number;
  /** The calls that need a decision, in the model's order. */
  readonly toolCallIds: readonly string[];
  readonly decisions: Readonly<Record<string, ApprovalDecision>>;
  /** Subagent calls of the step whose child waits for decisions: the child's state, by the call's id. */
  readonly children: Readonly<Record<string, AgentState>>;
  /** With an `approvalSecret`: each pending call's signature, by `approvalKey(callPath, toolCallId)`. */
  readonly signatures: Readonly<Record<string, string>>;
  /** The calls of `toolCallIds` that wait because a crash interrupted them (`reason: 'interrupted'`). */
  readonly interrupted?: readonly string[];
  /**
   * Only in a saved intent (the step checkpointed before its unsafe calls run): the unsafe calls
   * about to start. A load turns those without a result into interrupted calls.
   */
  readonly started?: readonly string[];
}

/**
 * Why the call `toolCallId` at `route` waits, or waited before a decision on it (`'interrupted'`
 * for a call a crash interrupted); undefined when the state does not tell (a route by subagent
 * names only, or a call that never waited).
 */
export function approvalReasonOf(
  state: AgentState,
  toolCallId: string,
  route?: ApprovalRoute,
): ApprovalReason | undefined {
  if (route?.path?.length && !route.callPath) return undefined;
  let at: AgentState | undefined = state;
  for (const id of route?.callPath ?? []) at = at?.approval()?.children[id];
  const approval = at?.approval();
  if (approval?.interrupted?.includes(toolCallId)) return 'interrupted';
  return approval?.toolCallIds.includes(toolCallId) ? 'approval' : undefined;
}

export const ApprovalRequest = {
  of(toolCallIds: readonly string[], requestedAt = Date.now()): ApprovalRequest {
    return Object.freeze({
      requestedAt,
      toolCallIds: Object.freeze([...toolCallIds]),
      decisions: Object.freeze({}),
      children: Object.freeze({}),
      signatures: Object.freeze({}),
    });
  },
  /** `request` (or a new one) asking also for the calls `toolCallIds` it does not ask for yet. */
  withRequested(
    request: ApprovalRequest | null,
    toolCallIds: readonly string[],
    at = Date.now(),
  ): ApprovalRequest {
    if (!request) return ApprovalRequest.of(toolCallIds, at);
    const added = toolCallIds.filter((id) => !request.toolCallIds.includes(id));
    if (added.length === 0) return request;
    return Object.freeze({ ...request, toolCallIds: Object.freeze([...request.toolCallIds, ...added]) });
  },
  /** A step that waits for the children of its subagent calls (`children`: by the call's id). */
  ofChildren(children: Readonly<Record<string, AgentState>>, requestedAt = Date.now()): ApprovalRequest {
    return Object.freeze({
      ...ApprovalRequest.of([], requestedAt),
      children: Object.freeze({ ...children }),
    });
  },
  undecided(request: ApprovalRequest): string[] {
    return request.toolCallIds.filter((id) => !Object.hasOwn(request.decisions, id));
  },
  /**
   * Takes a decision on a pending call: one of the step's own, or one inside a waiting child (found
   * by its id, and by `route` when the id alone names more than one pending call). Raises
   * ApprovalError for a call that is not pending, and changes nothing then.
   */
  withDecision(
    request: ApprovalRequest,
    calls: readonly ToolCall[],
    toolCallId: string,
    decision: ApprovalDecision,
    route?: ApprovalRoute | readonly string[],
  ): ApprovalRequest {
    const pending = ApprovalRequest.pending(request, calls);
    const matches = pendingMatches(pending, toolCallId, route);
    if (matches.length !== 1) throw decisionRefused(pending, toolCallId, route);
    const [first, ...rest] = matches[0]?.callPath ?? [];
    if (first === undefined) {
      // Edited input enters the state here: kept as its JSON form, refused if that cannot be saved.
      const kept: ApprovalDecision =
        decision.type === 'edit'
          ? Object.freeze({
              type: 'edit',
              args: toJsonValue(decision.args, `The edited input of '${toolCallId}'`),
            })
          : decision.type === 'complete'
            ? Object.freeze({
                type: 'complete',
                result: completedResult(toolCallId, decision.result),
                ...(decision.reconciled === true && { reconciled: true as const }),
              })
            : decision;
      return Object.freeze({
        ...request,
        decisions: Object.freeze({ ...request.decisions, [toolCallId]: kept }),
      });
    }
    // the match lies inside the child of the subagent call `first`, at `rest` below it
    const child = request.children[first];
    if (!child) throw ApprovalError.notPending(toolCallId, pending.map(describePending));
    const decided = child.withApprovalDecision(toolCallId, decision, { callPath: rest });
    return Object.freeze({
      ...request,
      children: Object.freeze({ ...request.children, [first]: decided }),
    });
  },
  /** The undecided calls: the step's own, then those inside its waiting children, in the model's order. */
  pending(request: ApprovalRequest, calls: readonly ToolCall[]): PendingApproval[] {
    const undecided = new Set(ApprovalRequest.undecided(request));
    const out: PendingApproval[] = [];
    for (const call of calls) {
      if (undecided.has(call.id)) {
        const reason: ApprovalReason = request.interrupted?.includes(call.id) ? 'interrupted' : 'approval';
        out.push(signed({ toolCallId: call.id, toolName: call.name, args: call.args, reason }, request));
      }
      const child = request.children[call.id];
      for (const nested of child?.pendingApprovals() ?? []) {
        const path = [call.name, ...(nested.path ?? [])];
        const callPath = [call.id, ...(nested.callPath ?? [])];
        const { signature: _childSignature, ...rest } = nested;
        out.push(signed({ ...rest, path, callPath }, request));
      }
    }
    return out;
  },
  withSignatures(request: ApprovalRequest, signatures: Readonly<Record<string, string>>): ApprovalRequest {
    return Object.freeze({ ...request, signatures: Object.freeze({ ...signatures }) });
  },
  /** The intent of a step about to run its unsafe calls `ids` (kept with any decisions taken). */
  withStarted(request: ApprovalRequest | null, ids: readonly string[], at = Date.now()): ApprovalRequest {
    return Object.freeze({ ...(request ?? ApprovalRequest.of([], at)), started: Object.freeze([...ids]) });
  },
  /**
   * The intent of a step whose subagent calls saved theirs: the children's states (by the call's
   * id) replace those kept, beside the step's own unsafe calls `ids` about to start. A load resumes
   * each child from its state here, where its own started calls wait as interrupted.
   */
  withChildIntents(
    request: ApprovalRequest | null,
    children: Readonly<Record<string, AgentState>>,
    ids: readonly string[],
    at = Date.now(),
  ): ApprovalRequest {
    const started = ApprovalRequest.withStarted(request, ids, at);
    return Object.freeze({ ...started, children: Object.freeze({ ...started.children, ...children }) });
  },
  /**
   * A saved intent as a load finds it: each started call without a result (`finished`) waits for a
   * person with `reason: 'interrupted'`, any earlier decision on it dropped (it was carried out).
   */
  interrupting(request: ApprovalRequest, finished: (toolCallId: string) => boolean): ApprovalRequest {
    const { started, ...rest } = request;
    const cut = (started ?? []).filter((id) => !finished(id));
    if (cut.length === 0) return Object.freeze(rest);
    const decisions = Object.fromEntries(Object.entries(rest.decisions).filter(([id]) => !cut.includes(id)));
    return Object.freeze({
      ...rest,
      toolCallIds: Object.freeze([...rest.toolCallIds.filter((id) => !cut.includes(id)), ...cut]),
      decisions: Object.freeze(decisions),
      interrupted: Object.freeze([...(rest.interrupted ?? []), ...cut]),
    });
  },
};

/** A person's result for a call, kept as its JSON form (as a tool's result is), else refused. */
function completedResult(toolCallId: string, result: unknown): unknown {
  if (result === undefined)
    throw new ApprovalError(
      'APPROVAL_INVALID_RESULT',
      `The 'complete' decision on tool call '${toolCallId}' has no 'result': give the call's outcome as a JSON value; nothing was changed.`,
      toolCallId,
    );
  try {
    // a function or a symbol has no JSON form (JSON.stringify gives nothing, not `null`): refused
    // as a BigInt is, not recorded as `null`
    const kind = typeof result;
    if (kind === 'function' || kind === 'symbol')
      throw new Error(`The result given for '${toolCallId}' is a ${kind}, which has no JSON form`);
    return toJsonValue(result, `The result given for '${toolCallId}'`);
  } catch (error) {
    throw new ApprovalError(
      'APPROVAL_INVALID_RESULT',
      `${(error as Error).message}; give the call's outcome as a JSON value. Nothing was changed.`,
      toolCallId,
    );
  }
}

function signed(pending: PendingApproval, request: ApprovalRequest): PendingApproval {
  const signature = request.signatures[approvalKey(pending.callPath, pending.toolCallId)];
  return Object.freeze(signature === undefined ? pending : { ...pending, signature });
}

/**
 * A decision as `agent.decide()` takes it. `callPath` (the pending call's) tells apart calls with
 * the same id in different subagent calls (`path`, the subagent names, is the older form);
 * `signature` (the pending call's) is required with an `approvalSecret`.
 */
export type ApprovalInput = {
  readonly toolCallId: string;
  readonly signature?: string;
} & ApprovalRoute &
  ApprovalDecision;
