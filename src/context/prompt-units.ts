import type { AgentState } from '../state/agent-state';
import type { Message } from '../state/message';

/**
 * A piece of the compiled prompt that compaction keeps or removes whole: an assistant message with
 * the tool results answering its calls (a step), or any other single message. Removing units, never
 * single messages, is what keeps every tool call next to its result.
 */
export interface PromptUnit {
  /** Index of the unit's first message in the compiled prompt. */
  readonly start: number;
  readonly messages: readonly Message[];
  /** The system messages, the execution's task, the summary and the latest step: never removed. */
  readonly pinned: boolean;
}

/**
 * Splits the compiled messages into units and marks the pinned ones: system messages, the task
 * (the current execution's first user message, see `taskOf`), the summary and everything from the
 * latest assistant message on.
 *
 * @example
 * promptUnits([task, callAB, resultA, resultB, answer], task);
 * // [task (pinned), [callAB, resultA, resultB], answer (pinned)]
 */
export function promptUnits(
  messages: readonly Message[],
  task: Message | null,
  executionId: string | null,
): PromptUnit[] {
  const taskAt = taskIndex(messages, task, executionId);
  let latest = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === 'assistant') {
      latest = i;
      break;
    }
  }
  const units: PromptUnit[] = [];
  let i = 0;
  while (i < messages.length) {
    const start = i;
    const first = messages[i] as Message;
    i++;
    if (first.role === 'assistant' && first.toolCalls?.length) {
      const ids = new Set(first.toolCalls.map((call) => call.id));
      while (i < messages.length && messages[i]?.role === 'tool' && ids.has(messages[i]?.toolCallId ?? ''))
        i++;
    }
    const pinned =
      first.role === 'system' || start === taskAt || isSummary(first) || (latest >= 0 && start >= latest);
    units.push({ start, messages: messages.slice(start, i), pinned });
  }
  return units;
}

/**
 * The execution's task, found in the state's whole conversation (not in a prompt, where folding or
 * the compiler may have left out the earlier executions' messages that delimit it): the first user
 * message after the last message of an earlier execution (output messages carry their execution's
 * id; user messages none). Null when there is none.
 */
export function taskOf(state: AgentState): Message | null {
  const executionId = state.executionId();
  const conversation = state.messageList();
  let task: Message | null = null;
  for (let i = conversation.size - 1; i >= 0; i--) {
    const message = conversation.at(i) as Message;
    const id = message.metadata.execution_id;
    if (typeof id === 'string' && id !== executionId) break;
    if (message.role === 'user') task = message;
  }
  return task;
}

/**
 * Where the task is in the prompt. A compiler that copies messages leaves the task's own object
 * out: then the first user message after the last message of an earlier execution and before the
 * first of this one, a summary never counted as one.
 */
function taskIndex(messages: readonly Message[], task: Message | null, executionId: string | null): number {
  const byIdentity = task ? messages.indexOf(task) : -1;
  if (byIdentity >= 0) return byIdentity;
  let first = messages.length;
  if (executionId !== null) {
    const found = messages.findIndex((m) => m.metadata.execution_id === executionId);
    if (found >= 0) first = found;
  }
  let earlier = -1;
  for (let i = first - 1; i >= 0; i--) {
    const id = messages[i]?.metadata.execution_id;
    if (typeof id === 'string' && id !== executionId) {
      earlier = i;
      break;
    }
  }
  const isTask = (m: Message | undefined) => m?.role === 'user' && !isSummary(m);
  for (let i = earlier + 1; i < first; i++) if (isTask(messages[i])) return i;
  for (let i = messages.length - 1; i >= 0; i--) if (isTask(messages[i])) return i;
  return -1;
}

/** The summary (a user message too, made by a summarizing policy) carries its cover in its metadata. */
const isSummary = (message: Message) => message.metadata.summary_through !== undefined;
