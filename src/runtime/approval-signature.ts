/**
 * Binding approvals to the exact call (`approvalSecret`): each pending call of a root run is signed
 * with HMAC-SHA256 over the session, the root's execution, the steps in flight from the root down
 * to the agent that asked, the ids of the subagent calls leading to the call, its id and its exact input (canonical JSON), and a decision
 * must carry that signature. A decision made for another call, an altered input, another session,
 * or an earlier turn or step (an identical call asked again) does not match and is refused.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { AgentState } from '../state/agent-state';
import type { ApprovalInput } from '../state/approval';
import { ApprovalError } from '../state/approval-error';
import { canonicalJson } from '../state/content-hash';
import { approvalKey, type PendingApproval, pendingMatches } from '../state/pending-approval';

/** The signature of one pending call of the root `state`; `sessionId` is the run's session (null without one). */
function approvalSignature(
  secret: string,
  sessionId: string | null,
  state: AgentState,
  pending: PendingApproval,
): string {
  const subject = canonicalJson({
    session: sessionId,
    execution: state.executionId(),
    steps: stepsTo(state, pending.callPath ?? []),
    callPath: pending.callPath ?? [],
    toolCallId: pending.toolCallId,
    input: pending.args,
  });
  return createHmac('sha256', secret).update(subject).digest('base64url');
}

/**
 * The ids of the steps in flight from the root down to the agent that asked (a subagent that asks
 * again in a later step of its own, with the same id and input, asks anew).
 */
function stepsTo(state: AgentState, callPath: readonly string[]): (string | null)[] {
  const steps = [state.currentStep()?.id() ?? null];
  let at: AgentState | undefined = state;
  for (const id of callPath) {
    at = at?.approval()?.children[id];
    steps.push(at?.currentStep()?.id() ?? null);
  }
  return steps;
}

/**
 * The state with every call a person may be asked about signed: each pending call (its own and
 * those inside waiting subagents), and, in a saved intent, each unsafe call about to start (a
 * load after a crash lists it as interrupted, with the signature saved here).
 */
export function withSignedApprovals(state: AgentState, secret: string, sessionId: string | null): AgentState {
  const listed = [...state.pendingApprovals(), ...startingCalls(state, [], [])];
  if (listed.length === 0) return state;
  return state.withApprovalSignatures(
    Object.fromEntries(
      listed.map((p) => [
        approvalKey(p.callPath, p.toolCallId),
        approvalSignature(secret, sessionId, state, p),
      ]),
    ),
  );
}

/**
 * `state` as a run with `secret` (the root's `approvalSecret`) hands it on or saves it under session
 * `sessionId`: signed (`withSignedApprovals`) when it lists calls a person may be asked about; as it
 * is without a secret, or with nothing waiting.
 */
export function signedBy(
  secret: string | undefined,
  state: AgentState,
  sessionId: string | null,
): AgentState {
  return secret && state.approval() !== null ? withSignedApprovals(state, secret, sessionId) : state;
}

/**
 * The unsafe calls a saved intent names as starting (`approval.started`) that have no result yet,
 * at every depth: a load after a crash lists them as interrupted, as this lists them.
 */
function startingCalls(
  state: AgentState,
  path: readonly string[],
  callPath: readonly string[],
): PendingApproval[] {
  const approval = state.approval();
  const step = state.currentStep();
  if (!approval || !step) return [];
  const started = new Set(approval.started ?? []);
  const finished = new Set(step.toolExecutions().map((e) => e.toolCallId()));
  const out: PendingApproval[] = [];
  for (const call of step.requestedToolCalls()) {
    if (started.has(call.id) && !finished.has(call.id))
      out.push({
        toolCallId: call.id,
        toolName: call.name,
        args: call.args,
        reason: 'interrupted',
        ...(callPath.length > 0 && { path, callPath }),
      });
    const child = Object.hasOwn(approval.children, call.id) ? approval.children[call.id] : undefined;
    if (child) out.push(...startingCalls(child, [...path, call.name], [...callPath, call.id]));
  }
  return out;
}

/**
 * Refuses (APPROVAL_SIGNATURE_INVALID) a decision on a pending call whose signature is missing or
 * does not match. A decision that names no pending call is left to `withApprovalDecision` to refuse.
 */
export function checkSignature(
  state: AgentState,
  input: ApprovalInput,
  secret: string,
  sessionId: string | null,
): void {
  const matches = pendingMatches(state.pendingApprovals(), input.toolCallId, input);
  const call = matches.length === 1 ? matches[0] : undefined;
  if (!call) return;
  const expected = Buffer.from(approvalSignature(secret, sessionId, state, call));
  const given = Buffer.from(typeof input.signature === 'string' ? input.signature : '');
  if (given.length === expected.length && timingSafeEqual(given, expected)) return;
  const where = sessionId === null ? 'this state (no session)' : `session '${sessionId}'`;
  throw new ApprovalError(
    'APPROVAL_SIGNATURE_INVALID',
    `The decision on tool call '${input.toolCallId}' ${
      input.signature === undefined ? 'carries no signature' : 'carries a signature that does not match'
    }: pass the 'signature' of the pending call as listed by pendingApprovals() for ${where}, unaltered. Nothing was changed.`,
    input.toolCallId,
  );
}
