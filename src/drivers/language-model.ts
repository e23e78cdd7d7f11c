/**
 * The part of an AI SDK language model the drivers call, written out here instead of imported from
 * `@ai-sdk/provider`: AI SDK 6 models are specification v3 (`@ai-sdk/provider` 3, Node 20), AI SDK 7
 * models are v4 (`@ai-sdk/provider` 4, which needs Node 22), and the library takes both without a
 * runtime dependency on either. The two specifications agree on everything the drivers use except
 * how file data is written (see `promptFileData` in src/messages).
 */

import type { ModelContent, PromptMessage } from '../messages/shapes';
import { AgentMachineError } from '../state/errors';
import type { ProviderMetadata } from '../state/message';

/**
 * Any AI SDK language model: specification v3 (AI SDK 6, `LanguageModelV3`) or v4 (AI SDK 7,
 * `LanguageModelV4`). The drivers choose the call format by `specificationVersion` at run time.
 *
 * @example
 * modelDriver(createOpenAICompatible({ name: 'local', baseURL }).chatModel('m')); // either major
 */
export interface LanguageModel {
  readonly specificationVersion: 'v3' | 'v4';
  readonly provider: string;
  readonly modelId: string;
  // `never` parameters: each specification's own call options are accepted; the drivers build them.
  doGenerate(options: never): PromiseLike<unknown>;
  doStream(options: never): PromiseLike<unknown>;
}

/** How the model may use the tools: any (`auto`), none, at least one (`required`), or one named tool. */
export type ToolChoice =
  | { readonly type: 'auto' }
  | { readonly type: 'none' }
  | { readonly type: 'required' }
  | { readonly type: 'tool'; readonly toolName: string };

/** Call settings both specifications take (temperature, maxOutputTokens, provider options, ...). */
export interface ModelCallSettings {
  readonly maxOutputTokens?: number;
  readonly temperature?: number;
  readonly stopSequences?: string[];
  readonly topP?: number;
  readonly topK?: number;
  readonly presencePenalty?: number;
  readonly frequencyPenalty?: number;
  readonly seed?: number;
  readonly toolChoice?: ToolChoice;
  readonly headers?: Record<string, string | undefined>;
  readonly providerOptions?: ProviderMetadata;
  /** v4 only (AI SDK 7): the reasoning effort. */
  readonly reasoning?: 'provider-default' | 'none' | 'minimal' | 'low' | 'medium' | 'high' | 'xhigh' | 'max';
}

export interface FunctionTool {
  type: 'function';
  name: string;
  description?: string;
  inputSchema: unknown;
}
/** A tool the provider defines and may run itself (a provider's web search, code execution, ...). */
export interface ProviderTool {
  type: 'provider';
  id: `${string}.${string}`;
  name: string;
  args: Record<string, unknown>;
}

export type CallOptions = { -readonly [K in keyof ModelCallSettings]: ModelCallSettings[K] } & {
  prompt: PromptMessage[];
  tools?: Array<FunctionTool | ProviderTool>;
  responseFormat?: { type: 'text' } | { type: 'json'; schema?: unknown; name?: string; description?: string };
  abortSignal?: AbortSignal;
};

type WithMetadata = { providerMetadata?: ProviderMetadata };

interface ModelUsage {
  inputTokens: { total: number | undefined };
  outputTokens: { total: number | undefined };
}

export interface GenerateResult {
  content: ModelContent[];
  finishReason: { unified: string; raw?: string | undefined };
  usage: ModelUsage;
  providerMetadata?: ProviderMetadata;
}

type Block = { id: string } & WithMetadata;
export type StreamPart =
  | ({ type: 'text-start' | 'text-end' | 'reasoning-start' | 'reasoning-end' } & Block)
  | ({ type: 'text-delta' | 'reasoning-delta'; delta: string } & Block)
  | ModelContent
  | ({ type: 'finish'; usage: ModelUsage; finishReason: GenerateResult['finishReason'] } & WithMetadata)
  | { type: 'error'; error: unknown }
  | {
      type:
        | 'tool-input-start'
        | 'tool-input-delta'
        | 'tool-input-end'
        | 'stream-start'
        | 'response-metadata'
        | 'raw'
        | 'ping';
    };

export interface StreamResult {
  stream: ReadableStream<StreamPart>;
}

/** The model as the drivers call it: the options they build and the results they read. */
export interface CallableModel {
  readonly specificationVersion: 'v3' | 'v4';
  readonly provider: string;
  readonly modelId: string;
  doGenerate(options: CallOptions): PromiseLike<GenerateResult>;
  doStream(options: CallOptions): PromiseLike<StreamResult>;
}

/**
 * The model with the call surface the drivers use. Both specifications take the same options and
 * return the same result shapes for what the drivers read; only file data differs, handled by
 * `promptFileData` on the way in and `fileData` on the way out (src/messages).
 */
export function callable(model: LanguageModel): CallableModel {
  const version = (model as { specificationVersion?: unknown }).specificationVersion;
  if (version !== 'v3' && version !== 'v4') throw new UnsupportedModelError(model, version);
  return model as unknown as CallableModel;
}

/** An object that is not an AI SDK language model of specification v3 or v4. */
export class UnsupportedModelError extends AgentMachineError {
  static override get name(): string {
    return 'UnsupportedModelError';
  }

  constructor(model: unknown, version: unknown) {
    const name = (model as { modelId?: unknown } | null)?.modelId;
    super(
      'UNSUPPORTED_MODEL',
      `Model ${typeof name === 'string' ? `"${name}" ` : ''}has specificationVersion ${JSON.stringify(version) ?? 'undefined'}: ` +
        'pass an AI SDK 6 (LanguageModelV3) or AI SDK 7 (LanguageModelV4) language model, such as `openai("gpt-4o")`',
    );
  }
}
