/**
 * Settling the calls a crash interrupted by asking their tools: before a run goes on from a state
 * whose unsafe calls wait as interrupted, each one whose tool has a `reconcile` is asked about,
 * with the call's own idempotency key. `'done'` records its result, `'not-done'` runs it once
 * more, anything else leaves it to a person.
 */
import type { Hook } from '../hooks/hook';
import { AgentError } from '../state/agent-error';
import { AgentState } from '../state/agent-state';
import type { ApprovalDecision } from '../state/approval';
import type { EventSource, RunListener } from '../state/event-source';
import { stepEventIds, type ToolReconciledEvent } from '../state/loop-events';
import type { PendingApproval } from '../state/pending-approval';
import type { ToolSet } from '../tools/define-tool';
import { type ReconcileVerdict, reconcileCall } from '../tools/reconcile-call';
import { idempotencyKey } from '../tools/run-tool';

/** What settling interrupted calls needs of the agent and the run. */
export interface ReconcileContext {
  /** The tools of the agent, or of the subagent at `path` below it. */
  readonly toolsAt: (path: readonly string[]) => ToolSet;
  /** The run's session: the scope of the root's idempotency keys (a subagent's is its own id). */
  readonly sessionId: string | null;
  /** The agent's `toolTimeoutMs`: a tool's own `timeoutMs` wins. */
  readonly timeoutMs: number | undefined;
  /** The agent's hooks: their `onError` is told of a reconcile that gave no answer. */
  readonly hooks: readonly Hook[];
  readonly signal: AbortSignal | undefined;
  readonly onEvent: RunListener | undefined;
  /** Told of each call's outcome (the agent's spans). */
  readonly onReconciled?: (event: ToolReconciledEvent) => void;
  /** Calls left alone (a person's decisions name them): by `approvalKey`-like `callPath/id`. */
  readonly skip?: (pending: PendingApproval) => boolean;
}

const never = new AbortController().signal;

/** Whether `state` has calls a crash interrupted that a tool's reconcile may settle. */
export function hasReconcilable(state: AgentState, toolsAt: ReconcileContext['toolsAt']): boolean {
  if (!state.approval()) return false;
  return state.pendingApprovals().some((p) => reconcilable(p, toolsAt));
}

function reconcilable(pending: PendingApproval, toolsAt: ReconcileContext['toolsAt']): boolean {
  if (pending.reason !== 'interrupted') return false;
  const tools = toolsAt(pending.path ?? []);
  const tool = Object.hasOwn(tools, pending.toolName) ? tools[pending.toolName] : undefined;
  return typeof tool?.reconcile === 'function';
}

/**
 * `state` with its interrupted calls settled where their tools' reconcile could tell: a `'done'`
 * call recorded with its result (resolution `'reconciled'` once the step goes on), a `'not-done'`
 * one approved to run again; the others still wait for a person. Each outcome is reported
 * (`tool.reconciled`), and a reconcile's error goes to the hooks' `onError` too.
 */
export async function reconcileInterrupted(
  state: AgentState,
  context: ReconcileContext,
): Promise<AgentState> {
  if (!state.approval()) return state;
  const asked = state
    .pendingApprovals()
    .filter((p) => reconcilable(p, context.toolsAt) && !context.skip?.(p));
  if (asked.length === 0) return state;
  const verdicts = await Promise.all(asked.map((pending) => ask(state, pending, context)));
  let settled = state;
  for (const [i, pending] of asked.entries()) {
    const verdict = verdicts[i] as ReconcileVerdict;
    const decision: ApprovalDecision | null =
      verdict.status === 'done'
        ? { type: 'complete', result: verdict.result, reconciled: true }
        : verdict.status === 'not-done'
          ? { type: 'approve', reconciled: true }
          : null;
    if (decision)
      settled = settled.withApprovalDecision(pending.toolCallId, decision, {
        callPath: pending.callPath ?? [],
      });
    const error = verdict.status === 'unknown' && verdict.error ? AgentError.from(verdict.error) : null;
    const event = reconciledEvent(state, pending, verdict, error);
    context.onReconciled?.(event);
    context.onEvent?.(event, sourceOf(state, pending));
    if (error) settled = await toldOfError(settled, error, context);
  }
  return settled;
}

/** Asks the tool of `pending` about it, with the key its interrupted `execute` had. */
function ask(
  state: AgentState,
  pending: PendingApproval,
  context: ReconcileContext,
): Promise<ReconcileVerdict> {
  const tools = context.toolsAt(pending.path ?? []);
  const tool = tools[pending.toolName] as NonNullable<ToolSet[string]>;
  const owner = stateAt(state, pending.callPath ?? []);
  // the root's calls are keyed in its session; a subagent (no session of its own) in its agent id
  const scope =
    (pending.callPath?.length ?? 0) === 0 ? (context.sessionId ?? owner.agentId()) : owner.agentId();
  const call = { id: pending.toolCallId, name: pending.toolName, args: pending.args };
  return reconcileCall(tool, call, idempotencyKey(scope, owner, pending.toolCallId), {
    signal: context.signal ?? never,
    timeoutMs: tool.timeoutMs ?? context.timeoutMs,
  });
}

/** The agent (root or waiting subagent) that holds the call at `callPath`. */
function stateAt(state: AgentState, callPath: readonly string[]): AgentState {
  let at = state;
  for (const id of callPath) {
    const child = at.approval()?.children[id];
    if (!child) break;
    at = child as AgentState;
  }
  return at;
}

function reconciledEvent(
  state: AgentState,
  pending: PendingApproval,
  verdict: ReconcileVerdict,
  error: AgentError | null,
): ToolReconciledEvent {
  const owner = stateAt(state, pending.callPath ?? []);
  return {
    type: 'tool.reconciled',
    ...stepEventIds(owner),
    toolCallId: pending.toolCallId,
    toolName: pending.toolName,
    status: verdict.status,
    error,
    value: verdict.status === 'done' ? verdict.result : null,
    ...(pending.callPath?.length && { path: pending.path ?? [], callPath: pending.callPath }),
  };
}

function sourceOf(state: AgentState, pending: PendingApproval): EventSource {
  const owner = stateAt(state, pending.callPath ?? []);
  const callPath = pending.callPath ?? [];
  const toolCallId = callPath[callPath.length - 1];
  const name = pending.path?.[pending.path.length - 1];
  return {
    step: owner.currentStep(),
    subagent: toolCallId !== undefined && name !== undefined ? { name, toolCallId, callPath } : null,
  };
}

/** The hooks' `onError`, told of a reconcile that gave no answer; a state they return is kept. */
async function toldOfError(
  state: AgentState,
  error: AgentError,
  context: ReconcileContext,
): Promise<AgentState> {
  let current = state;
  for (const hook of context.hooks) {
    if (!hook.onError) continue;
    const result = await hook.onError(current, { signal: context.signal ?? never, error });
    if (result instanceof AgentState) current = result;
  }
  return current;
}
