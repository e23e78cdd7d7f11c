/** Where an event of a run comes from: what `onEvent(event, source)` is given with each event. */
import type { AgentStep } from './agent-step';
import type { AgentEvent } from './loop-events';

/** The subagent call an event comes from. */
export interface SubagentOrigin {
  /** The subagent's name (its key in `subagents.agents`). */
  readonly name: string;
  /** The id of the tool call that started it. */
  readonly toolCallId: string;
  /** The ids of the subagent calls from the root down to this subagent's (the last is `toolCallId`). */
  readonly callPath?: readonly string[];
}

/** Where an event of a run comes from. */
export interface EventSource {
  /**
   * The emitting agent's step at the event: the step in flight, or at `step.finished` the step
   * just recorded; null outside a step (`execution.started`, `execution.finished`, ...).
   */
  readonly step: AgentStep | null;
  /** The subagent call the event comes from; null for the agent's own events. */
  readonly subagent: SubagentOrigin | null;
}

/** A run's listener: `execute(state, { onEvent })`. */
export type RunListener = (event: AgentEvent, source: EventSource) => void;
