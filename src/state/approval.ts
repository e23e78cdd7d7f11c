import { AgentMachineError } from './errors';
import { toJsonValue } from './json-value';
import type { ToolCall } from './message';
import { decodeNestedState, type NestedAgentState } from './nested-state';
import type { AgentStateJSON, AwaitingApprovalJSON } from './schemas';

// AgentState, named through nested-state.ts: agent-state.ts imports this file.
type AgentState = NestedAgentState;

/** A person's decision on one tool call awaiting approval. */
export type ApprovalDecision =
  | { readonly type: 'approve' }
  | { readonly type: 'reject'; readonly reason?: string }
  | { readonly type: 'edit'; readonly args: unknown }
  /** An interrupted call's outcome, given by a person: recorded as its result, the call not run. */
  | { readonly type: 'complete'; readonly result: unknown };

/**
 * Why a call waits for a person: its tool needs approval (`'approval'`), or it is an unsafe call
 * that started before a crash and did not finish (`'interrupted'`): it may or may not have run.
 */
export type ApprovalReason = 'approval' | 'interrupted';

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

/** A pending call as `state.pendingApprovals()` lists it. */
export interface PendingApproval {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly args: unknown;
  /** For a call inside a subagent: the names of the subagents that lead to it (`['researcher']`). */
  readonly path?: readonly string[];
  /**
   * For a call inside a subagent: the ids of the subagent tool calls that lead to it (`['call_1']`).
   * It names the call even when two calls of the same subagent wait on the same id.
   */
  readonly callPath?: readonly string[];
  /** With an `approvalSecret`: the signature a decision on this call must carry. */
  readonly signature?: string;
  /** Why it waits: its tool needs approval, or a crash interrupted it (it may have run). */
  readonly reason: ApprovalReason;
}

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

/**
 * Where a decision's call lies in a tree of agents: `callPath`, the ids of the subagent calls
 * leading to it (as `PendingApproval.callPath`), names it exactly; `path`, the subagent names (as
 * `PendingApproval.path`), is the older form, and cannot tell apart two calls of one subagent.
 * A bare array is a `path`. With neither, the id alone must name one pending call.
 */
export type ApprovalRoute = {
  readonly path?: readonly string[];
  readonly callPath?: readonly string[];
};

/** A route given as a bare array is a `path` of subagent names (the older form). */
function toApprovalRoute(route: ApprovalRoute | readonly string[] | undefined): ApprovalRoute {
  if (route === undefined) return {};
  return isNameList(route) ? { path: route } : route;
}

function isNameList(route: ApprovalRoute | readonly string[]): route is readonly string[] {
  return Array.isArray(route);
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

/** The pending calls a decision names: those with its id, at its `callPath` and `path` when it gives them. */
export function pendingMatches(
  pending: readonly PendingApproval[],
  toolCallId: string,
  route?: ApprovalRoute | readonly string[],
): PendingApproval[] {
  const { path, callPath } = toApprovalRoute(route);
  return pending.filter(
    (p) =>
      p.toolCallId === toolCallId &&
      (path === undefined || samePath(p.path, path)) &&
      (callPath === undefined || samePath(p.callPath, callPath)),
  );
}

/** A pending call as a decision would name it: its `callPath` and id (`p1/t1`), or its id at the root. */
export function describePending(pending: PendingApproval): string {
  return pending.callPath?.length
    ? `${pending.callPath.join('/')}/${pending.toolCallId}`
    : pending.toolCallId;
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

/** The key of a pending call in a tree of agents: the ids of the subagent calls leading to it, and its own. */
export function approvalKey(callPath: readonly string[] | undefined, toolCallId: string): string {
  return JSON.stringify([...(callPath ?? []), toolCallId]);
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
            ? Object.freeze({ type: 'complete', result: completedResult(toolCallId, decision.result) })
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
    const kept = toJsonValue(result, `The result given for '${toolCallId}'`);
    if (kept === undefined) throw new Error(`The result given for '${toolCallId}' is not a JSON value`);
    return kept;
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

function samePath(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  const left = a ?? [];
  const right = b ?? [];
  return left.length === right.length && left.every((name, i) => name === right[i]);
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

/**
 * An approval's fields in the serialized form (beside its step and the step's start): the time it
 * was requested, the calls, the decisions, and, only when there are some, the waiting children's
 * states and the signatures. The state's `toJSON()` and the checkpoint journal both write it.
 */
export function encodeApprovalFields(approval: ApprovalRequest) {
  return {
    requestedAt: new Date(approval.requestedAt).toISOString(),
    toolCallIds: approval.toolCallIds,
    decisions: approval.decisions,
    ...(Object.keys(approval.children).length > 0 && {
      children: Object.fromEntries(
        Object.entries(approval.children).map(([id, child]): [string, unknown] => [id, child.toJSON()]),
      ),
    }),
    ...(Object.keys(approval.signatures).length > 0 && { signatures: approval.signatures }),
    ...(approval.interrupted?.length && { interrupted: approval.interrupted }),
    ...(approval.started !== undefined && { started: approval.started }),
  };
}

/** An approval of a validated document, from the fields `encodeApprovalFields` writes. */
export function decodeApprovalFields(json: AwaitingApprovalJSON): ApprovalRequest {
  return Object.freeze({
    requestedAt: Date.parse(json.requestedAt),
    toolCallIds: Object.freeze([...json.toolCallIds]),
    decisions: Object.freeze({ ...json.decisions }) as ApprovalRequest['decisions'],
    children: Object.freeze(
      Object.fromEntries(
        // validated with this document: the schema checks each child as a whole AgentState
        Object.entries(json.children ?? {}).map(([id, child]) => [
          id,
          decodeNestedState(child as AgentStateJSON),
        ]),
      ),
    ),
    signatures: Object.freeze({ ...json.signatures }),
    ...(json.interrupted?.length && { interrupted: Object.freeze([...json.interrupted]) }),
    ...(json.started !== undefined && { started: Object.freeze([...json.started]) }),
  });
}
