import type { LedgerRun } from '../ledger/budget-ledger';
import type { AgentState } from '../state/agent-state';
import type { ReportEvent } from '../state/loop-events';
import type { ToolSet } from '../tools/define-tool';

export interface DriverContext {
  /** Aborted when the run is stopped: pass it to the model call. */
  readonly signal: AbortSignal;
  readonly tools: ToolSet;
  /** Reports progress (text deltas) to the agent's subscribers. */
  readonly report: (event: ReportEvent) => void;
  /**
   * The same object for every call of one agent actor's run (an `execute()`, or a long-lived
   * actor's session): a driver may keep what it can reuse from step to step in a WeakMap keyed by
   * it, and it goes when the run does. Absent when a driver is called outside an agent.
   */
  readonly run?: object;
  /**
   * The budget ledger and the scopes this run charges (absent without a ledger): a driver that
   * calls a model reserves each call's worst case first (see `reserveCall`).
   */
  readonly ledger?: LedgerRun;
}

/**
 * The model side of a step, state in and state out (seed 004): given the state at the start of a
 * step, return it with `currentStep` set to what the model answered (input messages, output
 * messages, inference response with tool calls, finish reason and usage). Tools run afterwards in
 * the loop's `tools` state.
 */
export interface Driver {
  readonly name: string;
  infer(state: AgentState, context: DriverContext): AgentState | Promise<AgentState>;
}
