import { Message } from '../state/message';
import { promptUnits } from './prompt-units';
import { estimateMessageTokens } from './token-estimate';

/**
 * What the default policy has taken out of one run's prompts so far. Decisions stay made for the
 * run: later prompts elide and drop the same messages, so the prompt changes only when it must
 * shrink again (and a provider's prompt cache keeps working in between).
 */
export interface TrimMemory {
  /** Tool results replaced by a placeholder. */
  readonly elided: WeakSet<Message>;
  /** First messages of the units dropped. */
  readonly dropped: WeakSet<Message>;
}

export const newTrimMemory = (): TrimMemory => ({ elided: new WeakSet(), dropped: new WeakSet() });

export interface Trimmed {
  readonly messages: readonly Message[];
  /** Messages elided or dropped by this call (not by earlier ones). */
  readonly removed: number;
  /** `tool-results` when placeholders were enough, `drop-steps` when whole steps went too. */
  readonly strategy: 'tool-results' | 'drop-steps' | null;
}

/**
 * The messages with the run's earlier decisions applied: elided tool results as placeholders,
 * dropped units left out.
 */
export function applyTrimMemory(messages: readonly Message[], memory: TrimMemory): Message[] {
  const out: Message[] = [];
  let dropping = false;
  for (const message of messages) {
    // a unit starts at a message that is not a tool result (or at an orphan result)
    if (message.role !== 'tool' || memory.dropped.has(message)) dropping = memory.dropped.has(message);
    if (dropping) continue;
    out.push(memory.elided.has(message) ? placeholderFor(message) : message);
  }
  return out;
}

/**
 * The default policy, without model calls: while the estimate is above `targetEstimate`, replace
 * the oldest tool results by a short placeholder (the result's call id and tool name stay, so the
 * pairing holds), then drop the oldest whole steps. Pinned units (system messages, the task, the
 * latest step) are never touched, so the result may stay above the target when they alone exceed it.
 * `messages` is what `applyTrimMemory` gave; the decisions are added to `memory`.
 */
export function trimPrompt(
  messages: readonly Message[],
  task: Message | null,
  executionId: string | null,
  targetEstimate: number,
  memory: TrimMemory,
): Trimmed {
  let estimate = 0;
  for (const message of messages) estimate += estimateMessageTokens(message);
  if (estimate <= targetEstimate) return { messages, removed: 0, strategy: null };
  const units = promptUnits(messages, task, executionId).filter((unit) => !unit.pinned);
  let removed = 0;
  const replaced = new Map<Message, Message>();
  for (const unit of units) {
    for (const message of unit.messages) {
      if (estimate <= targetEstimate) break;
      if (message.role !== 'tool' || isPlaceholder(message)) continue;
      const placeholder = placeholderFor(message);
      const saved = estimateMessageTokens(message) - estimateMessageTokens(placeholder);
      if (saved <= 0) continue;
      replaced.set(message, placeholder);
      estimate -= saved;
      removed++;
    }
  }
  const dropped = new Set<Message>();
  for (const unit of units) {
    if (estimate <= targetEstimate) break;
    const first = unit.messages[0] as Message;
    dropped.add(first);
    for (const message of unit.messages) {
      estimate -= estimateMessageTokens(replaced.get(message) ?? message);
      // a result elided in this call and then dropped counts once
      if (!replaced.has(message)) removed++;
    }
  }
  for (const [message] of replaced) memory.elided.add(originalOf(message));
  for (const first of dropped) memory.dropped.add(originalOf(first));
  const out: Message[] = [];
  let dropping = false;
  for (const message of messages) {
    if (message.role !== 'tool' || dropped.has(message)) dropping = dropped.has(message);
    if (!dropping) out.push(replaced.get(message) ?? message);
  }
  if (removed === 0) return { messages, removed: 0, strategy: null };
  return { messages: out, removed, strategy: dropped.size > 0 ? 'drop-steps' : 'tool-results' };
}

const placeholders = new WeakMap<Message, Message>();
const originals = new WeakMap<Message, Message>();

/** The same placeholder object for a result every time, so its estimate is computed once. */
function placeholderFor(result: Message): Message {
  let placeholder = placeholders.get(result);
  if (!placeholder) {
    placeholder = Message.of({
      role: 'tool',
      content: `[${result.content.length} characters of this ${result.toolName ?? 'tool'} result were left out to fit the context window]`,
      toolCallId: result.toolCallId,
      toolName: result.toolName,
      isError: result.isError,
      metadata: { ...result.metadata, context_placeholder: true },
    });
    placeholders.set(result, placeholder);
    originals.set(placeholder, result);
  }
  return placeholder;
}

const isPlaceholder = (message: Message) => originals.has(message);
const originalOf = (message: Message) => originals.get(message) ?? message;
