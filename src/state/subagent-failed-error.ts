import { AgentMachineError } from './errors';
import type { NestedAgentState } from './nested-state';

// AgentState, named through nested-state.ts: agent-state.ts imports this file.
type AgentState = NestedAgentState;

/** A subagent that ended without a final answer (stopped, failed, or silent). */
export class SubagentFailedError extends AgentMachineError {
  static override get name(): string {
    return 'SubagentFailedError';
  }

  constructor(
    readonly subagent: string,
    child: AgentState,
  ) {
    const partial = child
      .currentResponse()
      .map((m) => m.content)
      .filter(Boolean)
      .join('\n');
    super(
      'SUBAGENT_FAILED',
      `Subagent '${subagent}' ended ${child.status()} (${child.stopReason() ?? 'no stop reason'})` +
        (child.stopSignal()?.message ? `: ${child.stopSignal()?.message}` : '') +
        (partial ? `. Partial answer: ${partial}` : ''),
    );
  }
}
