import type { z } from 'zod';
import { InvalidArgumentError, kindOf } from './errors';
import { setOwn } from './json-value';
import type { contentPartSchema, MessageJSON, providerMetadataSchema, ToolCallJSON } from './schemas';

/** Provider-specific data by provider name: returned by a model, sent back to it as provider options. */
export type ProviderMetadata = z.infer<typeof providerMetadataSchema>;

/**
 * One part of a message's content: text, reasoning (with the provider's signature in
 * `providerMetadata`), a file or image (`data`: base64 text or a URL), or a call to a tool the
 * provider runs itself and its result (`providerExecuted`).
 */
export type ContentPart = z.infer<typeof contentPartSchema>;

/** A tool call the model asked for. `args` is the parsed input (the text itself when it did not parse). */
export interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly args: unknown;
  /** What the provider attached to the call (sent back with it). */
  readonly providerMetadata?: ProviderMetadata;
}

export type MessageRole = 'system' | 'user' | 'assistant' | 'tool';

/** The metadata key (value `true`) of a message steered into a run (`{ type: 'steer' }`). */
export const STEERED = 'steered';

/**
 * One message of the conversation. Assistant messages may carry tool calls; tool messages answer
 * one call (`toolCallId`) and say whether the result is an error. `metadata` holds the tags of
 * seed 000 (`step_id`, `execution_id`, `agent_id`, `is_trace`, `tool_execution_id`), and `steered`
 * on a message steered into a run.
 *
 * `content` is always the message's text. A message with more than text (images and files,
 * reasoning, provider-executed tools, provider metadata on its parts) also has `parts`, its whole
 * content in order, which is what a model is sent; an assistant message's own tool calls stay in
 * `toolCalls`, sent after its parts.
 */
export interface Message {
  readonly role: MessageRole;
  readonly content: string;
  readonly toolCalls?: readonly ToolCall[];
  readonly toolCallId?: string;
  readonly toolName?: string;
  readonly isError?: boolean;
  readonly parts?: readonly ContentPart[];
  /** Provider options of the whole message (the AI SDK's message-level `providerOptions`). */
  readonly providerMetadata?: ProviderMetadata;
  readonly metadata: Readonly<Record<string, unknown>>;
}

export type MessageInput = Omit<Message, 'metadata'> & { metadata?: Record<string, unknown> };

export const Message = {
  of(input: MessageInput): Message {
    if (typeof input.content !== 'string')
      throw new InvalidArgumentError(
        'message.content',
        `${input.content === null ? 'null' : typeof input.content} is not a string (a message's text; give images and files as parts)`,
      );
    // Copied key by key, not with `{ ...input }`: once optimised, V8's object spread here gave every
    // message a hidden class of its own (old-space garbage per message, and property reads on
    // messages that never stay monomorphic).
    const message = copied(input);
    if (input.parts) message.parts = Object.freeze(input.parts.map((part) => Object.freeze({ ...part })));
    message.metadata = Object.freeze(input.metadata ? copied(input.metadata) : {});
    return Object.freeze(message) as unknown as Message;
  },
  /**
   * A user message: text, or parts (text, images, files).
   *
   * @example
   * Message.user([{ type: 'text', text: 'What is this?' }, { type: 'file', mediaType: 'image/png', data: base64 }]);
   */
  user(content: string | readonly ContentPart[]): Message {
    if (typeof content === 'string') return Message.of({ role: 'user', content });
    if (!Array.isArray(content))
      throw new InvalidArgumentError(
        'user message',
        `expected a string or content parts, got ${kindOf(content)}`,
      );
    return Message.of({ role: 'user', content: textOf(content), parts: content });
  },
  assistant(content: string, toolCalls?: readonly ToolCall[]): Message {
    return Message.of(
      toolCalls?.length ? { role: 'assistant', content, toolCalls } : { role: 'assistant', content },
    );
  },
  system(content: string): Message {
    return Message.of({ role: 'system', content });
  },
  toolResult(call: Pick<ToolCall, 'id' | 'name'>, content: string, isError = false): Message {
    return Message.of({ role: 'tool', content, toolCallId: call.id, toolName: call.name, isError });
  },
  withMetadata(message: Message, metadata: Record<string, unknown>): Message {
    const merged = copied(message.metadata);
    for (const key of Object.keys(metadata)) setOwn(merged, key, metadata[key]);
    const tagged = copied(message);
    tagged.metadata = Object.freeze(merged);
    return Object.freeze(tagged) as unknown as Message;
  },
};

/** A plain copy of `record`'s own keys, in order (see `Message.of` for why not a spread). */
function copied(record: object): Record<string, unknown> {
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(record)) setOwn(copy, key, (record as Record<string, unknown>)[key]);
  return copy;
}

/** How a document's messages become the state's: copied (`decodeMessage`) or taken (`adoptMessage`). */
export type MessageDecoder = (json: MessageJSON) => Message;

/** A message of a validated document, frozen as the state holds it (a copy: the document stays the caller's). */
export function decodeMessage(json: MessageJSON): Message {
  return Message.of(json as Message);
}

/**
 * A message of a validated document that no one else holds (this library parsed its JSON), frozen
 * as it is: what `decodeMessage` gives, without a copy of every message and its metadata.
 */
export function adoptMessage(json: MessageJSON): Message {
  Object.freeze(json.metadata);
  if (json.parts) {
    for (const part of json.parts) Object.freeze(part);
    Object.freeze(json.parts);
  }
  return Object.freeze(json) as Message;
}

/** A tool call of a validated document, as a step records it: its id, name and arguments. */
export function decodeToolCall(json: ToolCallJSON): ToolCall {
  return Object.freeze({ id: json.id, name: json.name, args: json.args });
}

/** The text of some content parts: their text parts, joined. */
export function textOf(parts: readonly ContentPart[]): string {
  let text = '';
  for (const part of parts) if (part.type === 'text') text += part.text;
  return text;
}

/**
 * Refuses what is not a Message before it enters a conversation: an AI SDK ModelMessage (content
 * parts, no metadata) is turned into Messages by `messagesFromModelMessages` / `fromModelMessages`.
 */
export function assertMessages(messages: readonly unknown[]): void {
  messages.forEach((m, index) => {
    const message = m as Partial<Message> | null;
    if (
      typeof message?.content === 'string' &&
      typeof message.metadata === 'object' &&
      message.metadata !== null
    )
      return;
    throw new InvalidArgumentError(
      `messages[${index}]`,
      'is not a Message (build one with Message.user(...) / Message.of(...); for AI SDK ModelMessages use fromModelMessages(messages) or messagesFromModelMessages(messages))',
    );
  });
}
