/**
 * The AI SDK's message shapes, declared once and written out here instead of imported (the library
 * has no runtime dependency on `ai` or `@ai-sdk/provider`): the ModelMessage an app passes to
 * `generateText`, the prompt a language model takes (specification v3, AI SDK 6, and v4, AI SDK 7),
 * and the content a model answers with. They differ only in how file data is written.
 */

import type { ProviderMetadata } from '../state/message';

/** A JSON value, as the AI SDK types one (`JSONValue`). */
export type JSONValue =
  | null
  | string
  | number
  | boolean
  | { [key: string]: JSONValue | undefined }
  | JSONValue[];

/** Options by provider (`{ openai: { ... } }`): a message's or a part's `providerOptions`. */
export type ProviderOptions = Record<string, { [key: string]: JSONValue | undefined }>;

type WithOptions = { providerOptions?: ProviderOptions };

export type TextPart = { type: 'text'; text: string } & WithOptions;
type ReasoningPart = { type: 'reasoning'; text: string } & WithOptions;
/** A file part whose data is written as `D` (ModelMessage and the two prompt specifications differ). */
export type FilePart<D> = { type: 'file'; data: D; mediaType: string; filename?: string } & WithOptions;
export type ToolCallPart = {
  type: 'tool-call';
  toolCallId: string;
  toolName: string;
  input: unknown;
  providerExecuted?: boolean;
} & WithOptions;
export type ToolResultPart = {
  type: 'tool-result';
  toolCallId: string;
  toolName: string;
  output: { type: 'text' | 'error-text'; value: string } | { type: 'json' | 'error-json'; value: JSONValue };
} & WithOptions;

/** A stored part in the AI SDK's part shape, its file data written as `D`. */
export type PartAs<D> = TextPart | ReasoningPart | FilePart<D> | ToolCallPart | ToolResultPart;

/**
 * The AI SDK's `ModelMessage` (AI SDK 6 and 7), as far as a conversation holds it: what
 * `toModelMessages` returns is assignable to the AI SDK's own type, and `fromModelMessages` takes it.
 */
export type ModelMessage =
  | { role: 'system'; content: string; providerOptions?: ProviderOptions }
  | {
      role: 'user';
      content: string | Array<TextPart | FilePart<string | URL>>;
      providerOptions?: ProviderOptions;
    }
  | { role: 'assistant'; content: string | Array<PartAs<string | URL>>; providerOptions?: ProviderOptions }
  | { role: 'tool'; content: ToolResultPart[]; providerOptions?: ProviderOptions };

/** A message in any AI SDK ModelMessage form (either major, any part), as `fromModelMessages` reads it. */
export interface ModelMessageInput {
  readonly role: string;
  readonly content: unknown;
  readonly providerOptions?: unknown;
}

/** File data as the drivers hold it: bytes, base64 text, or a URL. */
export type FileData = Uint8Array | string | URL;

/** A prompt part's file data: v3 writes the bytes, base64 text or URL; v4 wraps it. */
export type PromptFileData =
  | FileData
  | { type: 'data'; data: Uint8Array | string }
  | { type: 'url'; url: URL };

type PromptFilePart = FilePart<PromptFileData>;

/** A prompt message in the shape both specifications share (file data is converted per call). */
export type PromptMessage = (
  | { role: 'system'; content: string }
  | { role: 'user'; content: Array<TextPart | PromptFilePart> }
  | { role: 'assistant'; content: Array<PartAs<PromptFileData>> }
  | { role: 'tool'; content: ToolResultPart[] }
) &
  WithOptions;

type WithMetadata = { providerMetadata?: ProviderMetadata };

/** A model's file data: v3 writes bytes/base64; v4 `{ type: 'data', data }` or `{ type: 'url', url }`. */
export type ResultFileData =
  | Uint8Array
  | string
  | { type: 'data'; data: Uint8Array | string }
  | { type: 'url'; url: URL };

/** The content parts of a model's answer the drivers read; others (sources, approvals, custom parts) are passed over. */
export type ModelContent =
  | ({ type: 'text'; text: string } & WithMetadata)
  | ({ type: 'reasoning'; text: string } & WithMetadata)
  | ({ type: 'file'; mediaType: string; data: ResultFileData } & WithMetadata)
  | ({
      type: 'tool-call';
      toolCallId: string;
      toolName: string;
      input: string;
      providerExecuted?: boolean;
    } & WithMetadata)
  | ({
      type: 'tool-result';
      toolCallId: string;
      toolName: string;
      result: unknown;
      isError?: boolean;
      preliminary?: boolean;
    } & WithMetadata)
  | ({ type: 'source' | 'tool-approval-request' | 'custom' | 'reasoning-file' } & WithMetadata);
