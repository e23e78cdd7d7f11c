import {
  APICallError,
  type LanguageModelV4,
  type LanguageModelV4CallOptions,
  type LanguageModelV4FunctionTool,
  type LanguageModelV4GenerateResult,
  type LanguageModelV4Message,
} from '@ai-sdk/provider';
import type { AgentState } from '../state/agent-state';
import { AgentStep, InferenceResponse } from '../state/agent-step';
import { Message, type ToolCall } from '../state/message';
import { Usage } from '../state/usage';
import { inputJsonSchema, type ToolSet } from '../tools/define-tool';
import type { Driver, DriverContext } from './driver';
import { conversationWithCurrentToolTrace, type MessageCompiler } from './message-compiler';

/** Price per million tokens, in the currency the budget's `maxCost` uses. */
export interface ModelPrice {
  readonly inputPerMillion: number;
  readonly outputPerMillion: number;
}
export type PricingTable = Readonly<Record<string, ModelPrice>>;

export interface ModelDriverOptions {
  /** Retries of a retryable model error (429, 5xx, network), with exponential backoff. Default 2. */
  readonly maxRetries?: number;
  /** First backoff in ms, doubled each retry; a provider's retry-after (up to 60 s) wins. Default 1000. */
  readonly retryDelayMs?: number;
  /** Prices by model id (`model.modelId`): each step's cost is computed from its usage. */
  readonly pricing?: PricingTable;
  readonly compileMessages?: MessageCompiler;
  /** Call options passed through to every model call (temperature, maxOutputTokens, ...). */
  readonly callOptions?: Partial<Omit<LanguageModelV4CallOptions, 'prompt' | 'tools' | 'abortSignal'>>;
}

/**
 * The driver for any AI SDK language model (provider packages such as @ai-sdk/openai,
 * @ai-sdk/anthropic, @ai-sdk/openai-compatible plug in unchanged): one model call per step.
 */
export function modelDriver(model: LanguageModelV4, options: ModelDriverOptions = {}): Driver {
  const compile = options.compileMessages ?? conversationWithCurrentToolTrace;
  const schemaCache = new WeakMap<ToolSet, Promise<LanguageModelV4FunctionTool[]>>();
  const toolsFor = (tools: ToolSet) => {
    let cached = schemaCache.get(tools);
    if (!cached) {
      cached = describeTools(tools);
      schemaCache.set(tools, cached);
    }
    return cached;
  };
  return {
    name: `model:${model.provider}/${model.modelId}`,
    async infer(state, context) {
      const input = compile(state);
      const call: LanguageModelV4CallOptions = {
        ...options.callOptions,
        ...llmConfigOptions(state),
        prompt: toPrompt(state.systemPrompt(), input),
        abortSignal: context.signal,
      };
      const tools = await toolsFor(context.tools);
      if (tools.length) Object.assign(call, { tools, toolChoice: { type: 'auto' } });
      const format = state.responseFormat();
      if (format.type === 'json')
        call.responseFormat = { type: 'json', schema: format.schema as never, name: format.name };
      const result = await withRetries(() => model.doGenerate(call), context, options);
      return state.withCurrentStep(toStep(result, input, model, options.pricing));
    },
  };
}

async function describeTools(tools: ToolSet): Promise<LanguageModelV4FunctionTool[]> {
  return Promise.all(
    Object.entries(tools).map(async ([name, tool]) => ({
      type: 'function' as const,
      name,
      description: tool.description,
      inputSchema: (await inputJsonSchema(tool.inputSchema)) as LanguageModelV4FunctionTool['inputSchema'],
    })),
  );
}

function llmConfigOptions(state: AgentState): Partial<LanguageModelV4CallOptions> {
  const config = state.llmConfig();
  if (!config) return {};
  const { model: _model, ...rest } = config as Record<string, unknown>;
  return rest as Partial<LanguageModelV4CallOptions>;
}

/** The conversation in the AI SDK's prompt format. */
export function toPrompt(systemPrompt: string, messages: readonly Message[]): LanguageModelV4Message[] {
  const prompt: LanguageModelV4Message[] = [];
  if (systemPrompt) prompt.push({ role: 'system', content: systemPrompt });
  for (const m of messages) {
    if (m.role === 'system') prompt.push({ role: 'system', content: m.content });
    else if (m.role === 'user') prompt.push({ role: 'user', content: [{ type: 'text', text: m.content }] });
    else if (m.role === 'assistant') {
      const content: Extract<LanguageModelV4Message, { role: 'assistant' }>['content'] = [];
      if (m.content) content.push({ type: 'text', text: m.content });
      for (const c of m.toolCalls ?? [])
        content.push({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: c.args });
      prompt.push({ role: 'assistant', content });
    } else {
      prompt.push({
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: m.toolCallId ?? '',
            toolName: m.toolName ?? '',
            output: m.isError ? { type: 'error-text', value: m.content } : { type: 'text', value: m.content },
          },
        ],
      });
    }
  }
  return prompt;
}

function toStep(
  result: LanguageModelV4GenerateResult,
  input: readonly Message[],
  model: LanguageModelV4,
  pricing: PricingTable | undefined,
): AgentStep {
  let text = '';
  const toolCalls: ToolCall[] = [];
  for (const part of result.content) {
    if (part.type === 'text') text += part.text;
    else if (part.type === 'tool-call') {
      toolCalls.push(
        Object.freeze({ id: part.toolCallId, name: part.toolName, args: parseArgs(part.input) }),
      );
    }
  }
  const inputTokens = result.usage.inputTokens.total ?? 0;
  const outputTokens = result.usage.outputTokens.total ?? 0;
  const price = pricing?.[model.modelId];
  const cost = price
    ? (inputTokens * price.inputPerMillion + outputTokens * price.outputPerMillion) / 1_000_000
    : 0;
  return AgentStep.of({
    inputMessages: input,
    outputMessages: [Message.assistant(text, toolCalls)],
    inferenceResponse: InferenceResponse.of({
      text,
      toolCalls,
      finishReason: result.finishReason.unified,
      usage: Usage.of({ inputTokens, outputTokens, cost }),
    }),
  });
}

/**
 * Tool arguments arrive as JSON text; text that does not parse is kept, and fails validation.
 * `__proto__` keys are dropped: they have no meaning in arguments and are refused in stored states.
 */
export function parseArgs(input: string): unknown {
  if (input.trim() === '') return {};
  try {
    return JSON.parse(input, (key, value) => (key === '__proto__' ? undefined : value));
  } catch {
    return input;
  }
}

async function withRetries<T>(
  call: () => PromiseLike<T>,
  context: DriverContext,
  options: ModelDriverOptions,
): Promise<T> {
  const maxRetries = options.maxRetries ?? 2;
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (
        attempt >= maxRetries ||
        !APICallError.isInstance(error) ||
        !error.isRetryable ||
        context.signal.aborted
      ) {
        throw error;
      }
      await sleep(retryDelay(error, attempt, options.retryDelayMs ?? 1000), context.signal);
    }
  }
}

function retryDelay(error: APICallError, attempt: number, base: number): number {
  const headers = error.responseHeaders ?? {};
  const ms = Number(headers['retry-after-ms']);
  if (Number.isFinite(ms) && ms >= 0 && ms <= 60_000) return ms;
  const seconds = Number(headers['retry-after']);
  if (Number.isFinite(seconds) && seconds >= 0 && seconds <= 60) return seconds * 1000;
  return base * 2 ** attempt;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
