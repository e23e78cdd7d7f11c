import { z } from 'zod';
import { AgentMachineError } from '../state/errors';

/**
 * A request the chat handler refuses; the body is `{ error: { code, message } }` and the `details`
 * fields, with the HTTP status the handler's table gives the code.
 */
export class ChatRequestError extends AgentMachineError {
  static override get name(): string {
    return 'ChatRequestError';
  }

  constructor(
    code: string,
    message: string,
    readonly details?: Readonly<Record<string, unknown>>,
  ) {
    super(code, message);
  }
}

/** What a chat request asks for: one more user message, or decisions on calls awaiting approval. */
export type ChatRequest =
  | { readonly chatId: string; readonly kind: 'message'; readonly text: string }
  | { readonly chatId: string; readonly kind: 'approvals'; readonly decisions: readonly ChatDecision[] };

export interface ChatDecision {
  /** The approval id: the call's tool call id in the chat (`p1/t1` for a call inside subagent call p1). */
  readonly toolCallId: string;
  readonly approved: boolean;
  readonly reason?: string;
  /** The signature the approval request carried (with an `approvalSecret`), sent back unchanged. */
  readonly signature?: string;
}

// DefaultChatTransport's body. The client sends its whole history; only the last message is
// read (the history is the session's), so the other messages are checked no further.
const part = z.looseObject({ type: z.string() });
const message = z.looseObject({ role: z.enum(['user', 'assistant', 'system']), parts: z.array(part) });
const body = z.looseObject({
  id: z.string({ error: '"id" (the chat id) must be a string' }),
  messages: z.array(message, { error: '"messages" must be an array' }).min(1, '"messages" is empty'),
  trigger: z.enum(['submit-message', 'regenerate-message']).optional(),
  messageId: z.string().optional(),
});
const approvalResponse = z.object({
  toolCallId: z.string(),
  state: z.literal('approval-responded'),
  approval: z.looseObject({
    id: z.string(),
    approved: z.boolean(),
    reason: z.string().optional(),
    signature: z.string().optional(),
  }),
});

/** Reads a POST body of the AI SDK's chat transport; a ChatRequestError (400) names what is wrong. */
export function parseChatRequest(text: string): ChatRequest {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new ChatRequestError('INVALID_JSON', `The body is not JSON (${(error as Error).message}).`);
  }
  const parsed = body.safeParse(data);
  if (!parsed.success) {
    const issues = parsed.error.issues.map((i) => `${i.path.join('.') || 'body'}: ${i.message}`);
    throw new ChatRequestError(
      'INVALID_REQUEST',
      `${issues.join('; ')}. Send the AI SDK chat transport's body: { id, messages, trigger }.`,
    );
  }
  const { id: chatId, messages, trigger, messageId } = parsed.data;
  if (trigger === 'regenerate-message') {
    throw new ChatRequestError(
      'REGENERATE_UNSUPPORTED',
      'Regenerating a message is not supported: the conversation is kept by the server; send a new message instead.',
    );
  }
  const last = messages[messages.length - 1] as z.output<typeof message>;
  if (last.role === 'user') {
    // sendMessage({ messageId }) rewrites an earlier message: the stored history cannot be rewritten.
    if (messageId !== undefined) {
      throw new ChatRequestError(
        'EDIT_UNSUPPORTED',
        'Editing an earlier message is not supported: the conversation is kept by the server; send a new message instead.',
      );
    }
    const text = last.parts
      .filter((p) => p.type === 'text' && typeof p.text === 'string')
      .map((p) => p.text as string)
      .join('');
    if (text.trim() === '') {
      throw new ChatRequestError(
        'EMPTY_MESSAGE',
        'The last message has no text: send a user message with a text part.',
      );
    }
    return { chatId, kind: 'message', text };
  }
  const decisions: ChatDecision[] = [];
  for (const candidate of last.parts) {
    const response = approvalResponse.safeParse(candidate);
    if (!response.success) continue;
    const { id, approved, reason, signature } = response.data.approval;
    decisions.push({
      toolCallId: id,
      approved,
      ...(reason ? { reason } : {}),
      ...(signature !== undefined && { signature }),
    });
  }
  if (decisions.length === 0) {
    throw new ChatRequestError(
      'NOTHING_TO_ANSWER',
      'The last message is neither a user message nor an assistant message with approval responses.',
    );
  }
  return { chatId, kind: 'approvals', decisions };
}
