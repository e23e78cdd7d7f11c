import { AgentState } from './agent-state';
import type { ContentPart, Message, ProviderMetadata } from './message';

type JSON = null | string | number | boolean | { [key: string]: JSON | undefined } | JSON[];
type PartMetadata = { providerMetadata?: Record<string, { [key: string]: JSON | undefined }> };

/** A part of a UI message, in the shapes the AI SDK's `UIMessage` (AI SDK 6 and 7) has them. */
export type UIMessagePart =
  | ({ type: 'text'; text: string; state: 'done' } & PartMetadata)
  | ({ type: 'reasoning'; text: string; state: 'done' } & PartMetadata)
  | ({ type: 'file'; mediaType: string; url: string; filename?: string } & PartMetadata)
  | { type: 'step-start' }
  | {
      type: `tool-${string}`;
      toolCallId: string;
      state: 'input-available';
      input: unknown;
      providerExecuted?: boolean;
      callProviderMetadata?: PartMetadata['providerMetadata'];
    }
  | {
      type: `tool-${string}`;
      toolCallId: string;
      state: 'output-available';
      input: unknown;
      output: unknown;
      providerExecuted?: boolean;
      callProviderMetadata?: PartMetadata['providerMetadata'];
    }
  | {
      type: `tool-${string}`;
      toolCallId: string;
      state: 'output-error';
      input: unknown;
      errorText: string;
      providerExecuted?: boolean;
      callProviderMetadata?: PartMetadata['providerMetadata'];
    };

/** The AI SDK's `UIMessage` (what `useChat` shows), assignable to its own type. */
export interface UIMessage {
  id: string;
  role: 'system' | 'user' | 'assistant';
  parts: UIMessagePart[];
}

type ToolPart = Extract<UIMessagePart, { toolCallId: string }>;

/**
 * A conversation as the AI SDK's UI messages, to show a stored session in `useChat`: each user
 * message is one UI message; the assistant's steps up to the next user message make one, a
 * `step-start` before each step, each tool call a `tool-<name>` part holding its result (or its
 * error). Files become URLs (`data:` URLs for inline data). Ids are the messages' positions, so
 * they stay the same as the conversation grows.
 *
 * @example
 * const { messages } = useChat({ messages: toUIMessages(await store.load(id).then((s) => s.state)) });
 */
export function toUIMessages(source: AgentState | readonly Message[]): UIMessage[] {
  const messages = source instanceof AgentState ? source.messages() : source;
  const out: UIMessage[] = [];
  const calls = new Map<string, ToolPart>();
  let assistant: UIMessage | null = null;
  messages.forEach((m, index) => {
    if (m.role === 'system' || m.role === 'user') {
      assistant = null;
      const parts = m.parts ? m.parts.flatMap((part) => uiPart(part)) : [text(m.content)];
      out.push({ id: `m${index}`, role: m.role, parts });
      return;
    }
    if (m.role === 'tool') {
      const call = calls.get(m.toolCallId ?? '');
      if (call) Object.assign(call, toolOutcome(m.content, m.isError === true));
      return;
    }
    if (!assistant) {
      assistant = { id: `m${index}`, role: 'assistant', parts: [] };
      out.push(assistant);
    }
    const step: UIMessagePart[] = [{ type: 'step-start' }];
    for (const part of m.parts ?? (m.content ? [{ type: 'text' as const, text: m.content }] : [])) {
      if (part.type === 'tool-result') {
        const call = calls.get(part.toolCallId);
        if (call) Object.assign(call, toolOutcome(part.output, part.isError === true));
      } else step.push(...uiPart(part, calls));
    }
    for (const c of m.toolCalls ?? []) {
      const part: ToolPart = {
        type: `tool-${c.name}`,
        toolCallId: c.id,
        state: 'input-available',
        input: c.args,
        ...(c.providerMetadata && { callProviderMetadata: metadata(c.providerMetadata) }),
      };
      calls.set(c.id, part);
      step.push(part);
    }
    assistant.parts.push(...step);
  });
  return out;
}

function uiPart(part: ContentPart, calls?: Map<string, ToolPart>): UIMessagePart[] {
  const meta = part.providerMetadata ? { providerMetadata: metadata(part.providerMetadata) } : {};
  switch (part.type) {
    case 'text':
      return [{ ...text(part.text), ...meta }];
    case 'reasoning':
      return [{ type: 'reasoning', text: part.text, state: 'done', ...meta }];
    case 'file': {
      const url = /^(https?|data):/i.test(part.data)
        ? part.data
        : `data:${part.mediaType};base64,${part.data}`;
      const filename = part.filename !== undefined ? { filename: part.filename } : {};
      return [{ type: 'file', mediaType: part.mediaType, url, ...filename, ...meta }];
    }
    case 'tool-call': {
      const call: ToolPart = {
        type: `tool-${part.toolName}`,
        toolCallId: part.toolCallId,
        state: 'input-available',
        input: part.input,
        ...(part.providerExecuted && { providerExecuted: true }),
        ...(part.providerMetadata && { callProviderMetadata: metadata(part.providerMetadata) }),
      };
      calls?.set(part.toolCallId, call);
      return [call];
    }
    case 'tool-result':
      return [];
  }
}

function text(value: string): UIMessagePart {
  return { type: 'text', text: value, state: 'done' };
}

/** A tool part's state once its result is known: the output, or the error's text. */
function toolOutcome(output: unknown, isError: boolean) {
  return isError
    ? {
        state: 'output-error' as const,
        errorText: typeof output === 'string' ? output : JSON.stringify(output),
      }
    : { state: 'output-available' as const, output };
}

function metadata(value: ProviderMetadata): PartMetadata['providerMetadata'] {
  return value as PartMetadata['providerMetadata'];
}
