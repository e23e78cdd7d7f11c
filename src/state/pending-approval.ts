/**
 * Why a call waits for a person: its tool needs approval (`'approval'`), or it is an unsafe call
 * that started before a crash and did not finish (`'interrupted'`): it may or may not have run.
 */
export type ApprovalReason = 'approval' | 'interrupted';

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

/** The key of a pending call in a tree of agents: the ids of the subagent calls leading to it, and its own. */
export function approvalKey(callPath: readonly string[] | undefined, toolCallId: string): string {
  return JSON.stringify([...(callPath ?? []), toolCallId]);
}

function samePath(a: readonly string[] | undefined, b: readonly string[] | undefined): boolean {
  const left = a ?? [];
  const right = b ?? [];
  return left.length === right.length && left.every((name, i) => name === right[i]);
}
