import type { AgentState } from './agent-state';
import { ExecutionStatus } from './execution-status';
import type { AgentEvent } from './loop-events';
import { Message } from './message';
import { StopReason } from './stop-reason';

/**
 * The metadata key (value `true`) of the assistant message that keeps what the model had streamed
 * when a person stopped the run mid-answer: the step it was giving is not recorded (its call was
 * aborted), but the text the person saw stays in the conversation, for a reload and the next turn.
 */
const STOPPED_ANSWER = 'stopped_answer';

/**
 * The text the root agent streamed (`text.delta`) in the step a person's stop cut off, from the
 * run's events: empty when the run was not stopped by a person, or its last step was recorded.
 */
export function cutOffText(final: AgentState, events: Iterable<AgentEvent>): string {
  if (final.status() !== ExecutionStatus.Stopped || final.stopReason() !== StopReason.UserRequested)
    return '';
  const executionId = final.executionId();
  const stepNumber = final.stepCount() + 1;
  let text = '';
  for (const event of events)
    if (
      event.type === 'text.delta' &&
      event.agentId === final.agentId() &&
      event.executionId === executionId &&
      event.stepNumber === stepNumber
    )
      text += event.delta;
  return text;
}

/**
 * `final` (a run a person stopped) with `text`, what the model had streamed of the step the stop
 * cut off, as the execution's last assistant message (marked `stopped_answer`); `final` itself
 * when there is no text.
 */
export function withStoppedAnswer(final: AgentState, text: string): AgentState {
  if (text === '') return final;
  const metadata = { execution_id: final.executionId(), agent_id: final.agentId(), [STOPPED_ANSWER]: true };
  return final.withMessages([Message.of({ role: 'assistant', content: text, metadata })]);
}

/** The stopped answer a state's execution ends with (see `withStoppedAnswer`), or null. */
export function stoppedAnswerOf(state: AgentState): Message | null {
  const last = state.messages().at(-1);
  const own = last?.metadata[STOPPED_ANSWER] === true && last.metadata.execution_id === state.executionId();
  return own ? (last ?? null) : null;
}
