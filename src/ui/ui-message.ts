import type { ApprovalReason } from '../state/pending-approval';
/**
 * The AI SDK's UI message stream protocol (v1), as far as an agent run speaks it: the chunks
 * `useChat` / `AbstractChat` read (the SDK's `uiMessageChunkSchema`) and the messages they hold.
 * Declared here, structurally, so the library does not depend on the `ai` package; the tests run
 * the SDK's own chat client against them.
 */

/** The finish reasons a `finish` chunk may carry. */
export type UIFinishReason = 'stop' | 'length' | 'content-filter' | 'tool-calls' | 'error' | 'other';

/** One chunk of a UI message stream, sent as one Server-Sent Event (`data: <json>`). */
export type UIMessageChunk =
  | { readonly type: 'start'; readonly messageId?: string; readonly messageMetadata?: unknown }
  | { readonly type: 'start-step' }
  | { readonly type: 'finish-step' }
  /** Takes the parts of the step in progress out of the message (AI SDK 7; a pool chat's restarted step). */
  | { readonly type: 'reset-step' }
  | { readonly type: 'text-start'; readonly id: string }
  | { readonly type: 'text-delta'; readonly id: string; readonly delta: string }
  | { readonly type: 'text-end'; readonly id: string }
  | {
      readonly type: 'tool-input-available';
      readonly toolCallId: string;
      readonly toolName: string;
      readonly input: unknown;
    }
  | {
      readonly type: 'tool-approval-request';
      readonly approvalId: string;
      readonly toolCallId: string;
      /** With an `approvalSecret`: the call's signature; the client sends it back with its answer. */
      readonly signature?: string;
      /**
       * Why the call waits: `'approval'` (its tool needs approval) or `'interrupted'` (a crash cut
       * it off: it may already have run). AI SDK 6's and 7's clients keep it as the tool part's
       * `approval.descriptor`, as the stored messages have it.
       */
      readonly approvalDescriptor?: { readonly reason: ApprovalReason };
    }
  | {
      readonly type: 'tool-approval-response';
      readonly approvalId: string;
      readonly approved: boolean;
      readonly reason?: string;
    }
  | { readonly type: 'tool-output-available'; readonly toolCallId: string; readonly output: unknown }
  | { readonly type: 'tool-output-error'; readonly toolCallId: string; readonly errorText: string }
  | { readonly type: 'tool-output-denied'; readonly toolCallId: string }
  | {
      readonly type: `data-${string}`;
      readonly id?: string;
      readonly data: unknown;
      readonly transient?: boolean;
    }
  | { readonly type: 'error'; readonly errorText: string }
  | { readonly type: 'finish'; readonly finishReason?: UIFinishReason; readonly messageMetadata?: unknown };

/** The headers of a UI message stream response (the SDK's `UI_MESSAGE_STREAM_HEADERS`). */
export const UI_MESSAGE_STREAM_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-vercel-ai-ui-message-stream': 'v1',
  'x-accel-buffering': 'no',
});

export type { ChatUIMessage, ChatUIMessagePart, UIToolPart } from '../messages/ui-parts';
