import type { AgentState } from '../state/agent-state';
import type { Message } from '../state/message';

/** Turns the state into the messages a model sees at the start of a step. */
export type MessageCompiler = (state: AgentState) => readonly Message[];

/**
 * The default compiler (seed 000's ConversationWithCurrentToolTrace): the whole conversation,
 * but tool traces (`is_trace`) only from the current execution; earlier executions contribute
 * their questions and final answers, not their tool calls.
 */
export const conversationWithCurrentToolTrace: MessageCompiler = (state) => {
  const executionId = state.executionId();
  const messages = state.messages();
  const keep = (m: Message) => m.metadata.is_trace !== true || m.metadata.execution_id === executionId;
  return messages.every(keep) ? messages : messages.filter(keep);
};

/** Every message of the conversation, traces of earlier executions included. */
export const allMessages: MessageCompiler = (state) => state.messages();
