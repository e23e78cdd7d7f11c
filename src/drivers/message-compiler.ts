import type { AgentState } from '../state/agent-state';
import { AppendOnlyList, type SharedFold } from '../state/append-only-list';
import type { Message } from '../state/message';

/** Turns the state into the messages a model sees at the start of a step. */
export type MessageCompiler = (state: AgentState) => readonly Message[];

/**
 * The default compiler (seed 000's ConversationWithCurrentToolTrace): the whole conversation,
 * but tool traces (`is_trace`) only from the current execution; earlier executions contribute
 * their questions and final answers, not their tool calls.
 */
export const conversationWithCurrentToolTrace: MessageCompiler = (state) => {
  const list = currentToolTraceList(state);
  if (list) return list.toArray();
  const executionId = state.executionId();
  return state.messages().filter((m) => keeps(m, executionId));
};

/**
 * `conversationWithCurrentToolTrace` as a shared list, computed incrementally: each step looks only
 * at the messages added since the last one. While nothing is left out the result is a prefix of
 * the conversation itself (so a step's recorded input shares it). Null while a step has output
 * not yet recorded (the list then would not hold the whole conversation).
 */
export function currentToolTraceList(state: AgentState): AppendOnlyList<Message> | null {
  if (state.currentStep()?.outputMessages().length) return null;
  const executionId = state.executionId();
  const conversation = state.messageList();
  return conversation.foldShared(kept, executionId, emptyFold, (fold, message, index) => {
    if (!keeps(message, executionId)) return { filtered: true, list: fold.list };
    return fold.filtered
      ? { filtered: true, list: fold.list.append(message) }
      : { filtered: false, list: conversation.prefix(index + 1) };
  }).list;
}

type KeptFold = { readonly filtered: boolean; readonly list: AppendOnlyList<Message> };
const kept = new WeakMap<object, SharedFold<string | null, KeptFold>>();
const emptyFold = (): KeptFold => ({ filtered: false, list: AppendOnlyList.empty() });

function keeps(m: Message, executionId: string | null): boolean {
  return m.metadata.is_trace !== true || m.metadata.execution_id === executionId;
}

/** Every message of the conversation, traces of earlier executions included. */
export const allMessages: MessageCompiler = (state) => state.messages();
