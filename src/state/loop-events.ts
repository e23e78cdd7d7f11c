import type { AgentError } from './agent-error';
import type { AgentState } from './agent-state';
import type { AgentStepType } from './agent-step-type';
import type { ApprovalDecision } from './approval';
import type { ExecutionStatus } from './execution-status';
import type { Message } from './message';
import type { ApprovalReason, PendingApproval } from './pending-approval';
import type { StopReason } from './stop-reason';
import type { StopSignal } from './stop-signal';
import type { Usage } from './usage';

/** Every event names the agent (and its parent, for subagents) and the execution. */
export interface EventIds {
  readonly agentId: string;
  readonly parentAgentId: string | null;
  readonly executionId: string;
}

/** The ids events about `state` carry. */
export function eventIds(state: AgentState): EventIds {
  return {
    agentId: state.agentId(),
    parentAgentId: state.parentAgentId(),
    executionId: state.executionId() ?? '',
  };
}

/**
 * The ids events about the step in flight of `state` carry: its number too. (One literal: a spread
 * followed by a key gives every object a hidden class of its own on Node 20, and `Object.assign`
 * costs about as much as the rest of a report; this runs at every tool step and streamed model
 * call someone listens to.)
 */
export function stepEventIds(state: AgentState): EventIds & { readonly stepNumber: number } {
  return {
    agentId: state.agentId(),
    parentAgentId: state.parentAgentId(),
    executionId: state.executionId() ?? '',
    stepNumber: state.stepCount() + 1,
  };
}

/** @lintignore exported for the declarations of the machine that emits it */
export interface ToolStartedEvent extends EventIds {
  readonly type: 'tool.started';
  readonly stepNumber: number;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly args: unknown;
}
/** @lintignore exported for the declarations of the machine that emits it */
export interface ToolFinishedEvent extends EventIds {
  readonly type: 'tool.finished';
  readonly stepNumber: number;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly ok: boolean;
  readonly blocked: boolean;
  readonly error: AgentError | null;
  /** The tool's result (null when it failed), so a client can show it as soon as the call ends. */
  readonly value: unknown;
  readonly durationMs: number;
}
/**
 * A call a crash interrupted was put to its tool's `reconcile` as the run went on: `'done'` (recorded
 * with the result it gave, not run), `'not-done'` (runs once more, with its idempotency key), or
 * `'unknown'` (it waits for a person; `error` says why when the reconcile threw, timed out or
 * answered something else). For a call inside a subagent, `path` and `callPath` lead to it.
 */
export interface ToolReconciledEvent extends EventIds {
  readonly type: 'tool.reconciled';
  readonly stepNumber: number;
  readonly toolCallId: string;
  readonly toolName: string;
  readonly status: 'done' | 'not-done' | 'unknown';
  readonly error: AgentError | null;
  /** The result recorded as the call's output (`'done'`); null otherwise. */
  readonly value: unknown;
  readonly path?: readonly string[];
  readonly callPath?: readonly string[];
}
/** @lintignore exported for the declarations of the machine that emits it */
export interface TextDeltaEvent extends EventIds {
  readonly type: 'text.delta';
  readonly stepNumber: number;
  readonly delta: string;
}

/**
 * The prompt of a step was compacted to fit `context.maxInputTokens` (the recorded steps are not):
 * how, how many messages were elided, dropped or summarized, and the prompt's tokens before and
 * after. `forced` when the provider had refused the prompt as too long; `fallback` when a summary
 * was due but the summarizer threw or answered too long, so the prompt was trimmed instead.
 */
export interface ContextCompactedEvent extends EventIds {
  readonly type: 'context.compacted';
  readonly stepNumber: number;
  readonly strategy: 'tool-results' | 'drop-steps' | 'summary';
  readonly messagesRemoved: number;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  readonly forced: boolean;
  readonly fallback?: SummaryFallback;
}

/** Why a summary was not made: the summarizer threw, or its summary was longer than its room. */
export interface SummaryFallback {
  readonly reason: 'summarizer-error' | 'summary-too-long';
  /** What happened, with the summarizer's error message. */
  readonly message: string;
}

/**
 * The budget ledger holds a model call's worst case on the run's scopes (`ledgerScopes`) before
 * the call starts: `cost` is null when no scope caps cost and the model has no price.
 */
export interface LedgerReservedEvent extends EventIds {
  readonly type: 'ledger.reserved';
  readonly stepNumber: number;
  /** The reservation's key: one per step, the same across retries and fallback models. */
  readonly key: string;
  readonly scopes: readonly string[];
  readonly cost: number | null;
  readonly tokens: number | null;
}

/**
 * The reservation of a model call ended: settled to what the call used (`cost`, `tokens`), or
 * `released` (the call failed or was stopped: nothing charged). `leaseError`: renewing the
 * reservation's lease failed meanwhile, or releasing it failed (then its lease ends it): the message.
 */
export interface LedgerSettledEvent extends EventIds {
  readonly type: 'ledger.settled';
  readonly stepNumber: number;
  readonly key: string;
  readonly scopes: readonly string[];
  readonly cost: number;
  readonly tokens: number;
  readonly released: boolean;
  readonly leaseError?: string;
}

/** Events the loop's own actors report to it while they run; the machine emits them unchanged. */
export type ReportEvent =
  | ToolStartedEvent
  | ToolFinishedEvent
  | TextDeltaEvent
  | ContextCompactedEvent
  | LedgerReservedEvent
  | LedgerSettledEvent;

/** The typed events an agent actor emits (`actor.on(type, listener)`). */
export type AgentEvent =
  | (EventIds & { readonly type: 'execution.started' })
  | (EventIds & {
      readonly type: 'execution.finished';
      readonly status: ExecutionStatus;
      readonly stopReason: StopReason | null;
      readonly stepCount: number;
      readonly usage: Usage;
    })
  | (EventIds & { readonly type: 'step.started'; readonly stepNumber: number })
  | (EventIds & {
      readonly type: 'step.finished';
      readonly stepNumber: number;
      readonly stepId: string;
      readonly stepType: AgentStepType;
      readonly finishReason: string | null;
      readonly usage: Usage;
      readonly errors: readonly AgentError[];
      readonly durationMs: number;
    })
  | (EventIds & {
      readonly type: 'continuation.evaluated';
      readonly stepNumber: number;
      readonly shouldStop: boolean;
      readonly stopSignal: StopSignal | null;
      readonly stopReason: StopReason | null;
      readonly source: string | null;
    })
  | (EventIds & { readonly type: 'error'; readonly stepNumber: number; readonly error: AgentError })
  | (EventIds & {
      readonly type: 'approval.requested';
      readonly stepNumber: number;
      readonly toolCalls: readonly PendingApproval[];
    })
  | (EventIds & {
      readonly type: 'approval.decided';
      readonly stepNumber: number;
      readonly toolCallId: string;
      readonly decision: ApprovalDecision;
      /** For a call inside a subagent, when the decision named it: the subagent names leading to it. */
      readonly path?: readonly string[];
      /** For a call inside a subagent, when the decision named it: the ids of the calls leading to it. */
      readonly callPath?: readonly string[];
      /** Why the call waited: its tool needs approval, or a crash interrupted it (`'interrupted'`). */
      readonly reason?: ApprovalReason;
    })
  | (EventIds & { readonly type: 'event.refused'; readonly event: string; readonly error: AgentError })
  /** A message steered into the run joined the conversation: the model sees it at step `stepNumber`. */
  | (EventIds & { readonly type: 'message.steered'; readonly stepNumber: number; readonly message: Message })
  | ToolReconciledEvent
  | ReportEvent;

export type LoopEmitted = AgentEvent;
export type AgentEventType = AgentEvent['type'];
