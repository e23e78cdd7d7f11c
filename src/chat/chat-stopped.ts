import type { SessionStore } from '../persistence/session-store';
import type { AgentState } from '../state/agent-state';
import type { AgentEvent } from '../state/loop-events';
import { cutOffText, stoppedAnswerOf, withStoppedAnswer } from '../state/stopped-answer';

/**
 * A chat run a person stopped mid-answer: what the model had streamed of the step the stop cut
 * off (the page shows it) is saved as the execution's last assistant message, so a reload and the
 * next turn's model see what the page saw (the AI SDK's chat persistence keeps an aborted
 * message the same way). Resolves the saved state and its version, or null when nothing was cut off.
 */
export async function keepStoppedAnswer(
  store: SessionStore,
  chatId: string,
  final: AgentState,
  events: Iterable<AgentEvent>,
): Promise<{ state: AgentState; version: number } | null> {
  const text = cutOffText(final, events);
  if (text === '') return null;
  const stored = await store.load(chatId);
  // saved by this run, and not kept already
  if (!stored || stored.state.executionId() !== final.executionId() || stoppedAnswerOf(stored.state))
    return null;
  const state = withStoppedAnswer(stored.state, text);
  return { state, version: await store.save(chatId, state, stored.version) };
}
