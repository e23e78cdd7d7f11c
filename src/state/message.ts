/** A tool call the model asked for. `args` is the parsed input; `rawArgs` the text when it did not parse. */
export interface ToolCall {
  readonly id: string;
  readonly name: string;
  readonly args: unknown;
}

export type MessageRole = 'system' | 'user' | 'assistant' | 'tool';

/**
 * One message of the conversation. Assistant messages may carry tool calls; tool messages answer
 * one call (`toolCallId`) and say whether the result is an error. `metadata` holds the tags of
 * seed 000 (`step_id`, `execution_id`, `agent_id`, `is_trace`, `tool_execution_id`).
 */
export interface Message {
  readonly role: MessageRole;
  readonly content: string;
  readonly toolCalls?: readonly ToolCall[];
  readonly toolCallId?: string;
  readonly toolName?: string;
  readonly isError?: boolean;
  readonly metadata: Readonly<Record<string, unknown>>;
}

export type MessageInput = Omit<Message, 'metadata'> & { metadata?: Record<string, unknown> };

export const Message = {
  of(input: MessageInput): Message {
    return Object.freeze({ ...input, metadata: Object.freeze({ ...(input.metadata ?? {}) }) });
  },
  user(content: string): Message {
    return Message.of({ role: 'user', content });
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
    return Object.freeze({ ...message, metadata: Object.freeze({ ...message.metadata, ...metadata }) });
  },
};
