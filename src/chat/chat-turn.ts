import { AgentState } from '../state/agent-state';
import { ApprovalError } from '../state/approval-error';

/**
 * Starts one turn of a chat, the same way wherever a turn starts (the chat handler in process, the
 * pool's handler and its worker, `agent.chat()`): the stored conversation (a new one when none is
 * stored) is refused while it waits for approval (ApprovalError, APPROVAL_PENDING: decide first);
 * else the messages steered in as its last run concluded come first (they were sent before this
 * one), then the user's `text`, and `run` runs that state.
 *
 * @example
 * const stream = startChatTurn(stored?.state, 'Hi', (state) => agent.stream(state, { sessionId }));
 */
export function startChatTurn<T>(
  stored: AgentState | null | undefined,
  text: string,
  run: (state: AgentState) => T,
): T {
  const state = stored ?? AgentState.empty();
  if (state.approval()) throw ApprovalError.pending(state);
  return run(state.withSteeringApplied().withUserMessage(text));
}
