import type { AgentError } from '../state/agent-error';
import type { AgentState } from '../state/agent-state';
import type { HookStage } from '../state/hook-stage';
import type { ToolCall } from '../state/message';
import type { ToolExecution } from '../state/tool-execution';

/** A hook returns the state it was given, a changed state, or nothing (no change). */
export type HookResult = AgentState | undefined;
type MaybePromise<T> = T | Promise<T>;

export interface StageContext {
  /** Aborted when the run is stopped; pass it on to anything slow. */
  readonly signal: AbortSignal;
}
export interface ErrorContext extends StageContext {
  readonly error: AgentError;
}

/** What a beforeToolUse hook decides: block the call, rewrite its arguments, and/or change the state. */
export interface ToolUseDecision {
  readonly block?: string;
  readonly args?: unknown;
  readonly state?: AgentState;
}
export interface ToolUseContext extends StageContext {
  readonly toolCall: ToolCall;
}
export interface ToolResultContext extends StageContext {
  readonly toolExecution: ToolExecution;
}

/**
 * Hooks observe and steer the loop at its lifecycle points. Each receives the state and returns a
 * state (or nothing): it can add a stop signal, request continuation, change messages or metadata.
 * Hooks run in the order given; a synchronous hook costs no extra scheduling.
 *
 * @example
 * const audit: Hook = {
 *   name: 'audit',
 *   afterStep: (state) => state.withMetadata('lastStep', state.currentStep()?.id()),
 *   beforeToolUse: (state, { toolCall }) => (toolCall.name === 'rm' ? { block: 'rm is not allowed' } : undefined),
 * };
 */
export interface Hook {
  readonly name?: string;
  beforeExecution?(state: AgentState, context: StageContext): MaybePromise<HookResult>;
  beforeStep?(state: AgentState, context: StageContext): MaybePromise<HookResult>;
  afterStep?(state: AgentState, context: StageContext): MaybePromise<HookResult>;
  afterExecution?(state: AgentState, context: StageContext): MaybePromise<HookResult>;
  onError?(state: AgentState, context: ErrorContext): MaybePromise<HookResult>;
  beforeToolUse?(state: AgentState, context: ToolUseContext): MaybePromise<ToolUseDecision | HookResult>;
  afterToolUse?(state: AgentState, context: ToolResultContext): MaybePromise<ToolExecution | HookResult>;
}

/** @deprecated Use `HookStage` (the same union); `StageName` goes in the next release. */
export type StageName = HookStage;
