import type { ContentPart, ProviderMetadata } from '../state/message';
import type { ApprovalReason } from '../state/pending-approval';
import type { ProviderOptions } from './shapes';

type PartMetadata = { readonly providerMetadata?: ProviderOptions };

interface UIToolCall {
  readonly type: `tool-${string}`;
  readonly toolCallId: string;
  readonly input: unknown;
  /** A call the provider ran (a provider's web search, say), not one of the agent's tools. */
  readonly providerExecuted?: boolean;
  readonly callProviderMetadata?: ProviderOptions;
}

/** A tool call as a part of an assistant message, in the state the chat client shows it. */
export type UIToolPart = UIToolCall &
  (
    | { readonly state: 'input-available' }
    | {
        readonly state: 'approval-requested';
        readonly approval: {
          readonly id: string;
          readonly signature?: string;
          /**
           * Why the call waits: `'approval'`, or `'interrupted'` (a crash cut it off: it may already
           * have run). Where the stream's `tool-approval-request` puts it (`approvalDescriptor`).
           */
          readonly descriptor?: { readonly reason: ApprovalReason };
        };
      }
    | {
        readonly state: 'approval-responded';
        readonly approval: {
          readonly id: string;
          readonly approved: boolean;
          readonly reason?: string;
          readonly signature?: string;
        };
      }
    | { readonly state: 'output-available'; readonly output: unknown }
    | { readonly state: 'output-error'; readonly errorText: string }
  );

/** A part of a UI message, in the shapes the AI SDK's `UIMessage` (AI SDK 6 and 7) has them. */
export type UIMessagePart =
  | ({ readonly type: 'text'; readonly text: string; readonly state?: 'done' } & PartMetadata)
  | ({ readonly type: 'reasoning'; readonly text: string; readonly state: 'done' } & PartMetadata)
  | ({
      readonly type: 'file';
      readonly mediaType: string;
      readonly url: string;
      readonly filename?: string;
    } & PartMetadata)
  | { readonly type: 'step-start' }
  | UIToolPart;

/** The AI SDK's `UIMessage` (what `useChat` shows), assignable to its own type. */
export interface UIMessage {
  readonly id: string;
  readonly role: 'system' | 'user' | 'assistant';
  parts: UIMessagePart[];
}

/** @deprecated The same type as `UIMessage` (the chat's messages and `toUIMessages`' are one). */
export type ChatUIMessage = UIMessage;
/** @deprecated The same type as `UIMessagePart`. */
export type ChatUIMessagePart = UIMessagePart;

/**
 * A stored content part as UI message parts: text, reasoning and files (a URL; a `data:` URL for
 * inline data) with their provider metadata, a provider-executed call as its tool part. A
 * provider-executed result has no part of its own: it completes its call's part (`toolOutcome`).
 */
export function uiPart(part: ContentPart): UIMessagePart[] {
  const meta = part.providerMetadata ? { providerMetadata: metadata(part.providerMetadata) } : {};
  switch (part.type) {
    case 'text':
      return [{ ...textPart(part.text), ...meta }];
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
      return [
        {
          type: `tool-${part.toolName}`,
          toolCallId: part.toolCallId,
          state: 'input-available',
          input: part.input,
          ...(part.providerExecuted && { providerExecuted: true }),
          ...(part.providerMetadata && { callProviderMetadata: metadata(part.providerMetadata) }),
        },
      ];
    }
    case 'tool-result':
      return [];
  }
}

export function textPart(value: string): UIMessagePart {
  return { type: 'text', text: value, state: 'done' };
}

/** A tool part's state once its result is known: the output, or the error's text. */
export function toolOutcome(output: unknown, isError: boolean) {
  return isError
    ? {
        state: 'output-error' as const,
        errorText: typeof output === 'string' ? output : JSON.stringify(output),
      }
    : { state: 'output-available' as const, output };
}

export function metadata(value: ProviderMetadata): ProviderOptions {
  return value as ProviderOptions;
}
