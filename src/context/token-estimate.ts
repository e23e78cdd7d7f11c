import type { Message } from '../state/message';

/**
 * The estimate of a text's tokens: one token per 3 UTF-16 characters, rounded up. Tokenizers of
 * current models give about 4 characters a token for English prose and 3 for code, JSON and
 * non-English text; 3 overestimates prose, which is the safe side for a window that must not
 * overflow. The estimate is only used for what was added since the provider last reported a
 * count (see `TokenCount`), so its error does not accumulate over a long run.
 *
 * @example
 * estimateTextTokens('What is 2 + 3?'); // 5
 */
export function estimateTextTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** The characters of text whose estimate is `tokens` (the inverse of `estimateTextTokens`). */
export function charsForTokens(tokens: number): number {
  return tokens * CHARS_PER_TOKEN;
}

const CHARS_PER_TOKEN = 3;
/** Role, separators and tool call ids that providers add around each message. */
const MESSAGE_OVERHEAD = 6;

const cache = new WeakMap<Message, number>();

/**
 * The estimate of one message's tokens: its content, tool calls (name and JSON arguments) and a
 * fixed overhead for the role and framing. Computed once per message (messages are immutable).
 *
 * @example
 * estimateMessageTokens(Message.user('What is 2 + 3?')); // 11
 */
export function estimateMessageTokens(message: Message): number {
  let tokens = cache.get(message);
  if (tokens === undefined) {
    tokens = MESSAGE_OVERHEAD + estimateTextTokens(message.content);
    for (const call of message.toolCalls ?? [])
      tokens += MESSAGE_OVERHEAD + estimateTextTokens(call.name + JSON.stringify(call.args ?? null));
    if (message.toolName) tokens += estimateTextTokens(message.toolName);
    cache.set(message, tokens);
  }
  return tokens;
}

/** The estimate of a list of messages. */
export function estimateMessagesTokens(messages: readonly Message[]): number {
  let total = 0;
  for (const message of messages) total += estimateMessageTokens(message);
  return total;
}
