import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4FunctionTool,
  LanguageModelV4Message,
} from '@ai-sdk/provider';
import { type ContextOptions, ContextWindow } from '../context/context-window';
import { AgentStep, InferenceResponse } from '../state/agent-step';
import { AppendOnlyList } from '../state/append-only-list';
import { Message, type ToolCall } from '../state/message';
import { Usage } from '../state/usage';
import { inputJsonSchema, type ToolSet, toolDescription } from '../tools/define-tool';
import type { Driver } from './driver';
import {
  conversationWithCurrentToolTrace,
  currentToolTraceList,
  type MessageCompiler,
} from './message-compiler';
import {
  callModel,
  callUsage,
  llmConfigOptions,
  type ModelCallOptions,
  type PricingTable,
} from './model-call';
import type { CollectedResult } from './model-stream';
import { modelSummarizer } from './model-summarizer';
import { callWithinWindow } from './windowed-model-call';

export type { ModelPrice, PricingTable } from './model-call';

/** Options of the model and ReAct drivers: retries and `stream` (ModelCallOptions), and these. */
export interface ModelDriverOptions extends ModelCallOptions {
  /** Prices by model id (`model.modelId`): each step's cost is computed from its usage. */
  readonly pricing?: PricingTable;
  readonly compileMessages?: MessageCompiler;
  /** Call options passed through to every model call (temperature, maxOutputTokens, ...). */
  readonly callOptions?: Partial<Omit<LanguageModelV4CallOptions, 'prompt' | 'tools' | 'abortSignal'>>;
  /** Keep every prompt within `maxInputTokens` (see ContextOptions; `createAgent({ context })`). */
  readonly context?: ContextOptions;
}

/**
 * The driver for any AI SDK language model (provider packages such as @ai-sdk/openai,
 * @ai-sdk/anthropic, @ai-sdk/openai-compatible plug in unchanged): one model call per step, with
 * the tools as JSON Schema and the model's native tool calling.
 *
 * Retryable errors (the provider's `isRetryable`: 429, 5xx, network) are retried up to
 * `maxRetries` times; when they run out the error is the provider's, its message ending in
 * `(failed after N attempts)`. Other errors are not retried.
 *
 * @example
 * const driver = modelDriver(createOpenAICompatible({ name: 'local', baseURL }).chatModel('m'), {
 *   stream: true,
 *   maxRetries: 2,
 * });
 * createAgent({ driver, tools: { add } });
 */
export function modelDriver(model: LanguageModelV4, options: ModelDriverOptions = {}): Driver {
  const compile = options.compileMessages ?? conversationWithCurrentToolTrace;
  const summarize = options.context?.summarize;
  const window =
    options.context &&
    new ContextWindow(
      options.context,
      summarize ? modelSummarizer(summarize === true ? model : summarize, options) : null,
    );
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
      // the default compilation, incrementally and shared with the conversation; else the user's
      const input =
        (compile === conversationWithCurrentToolTrace && currentToolTraceList(state)) || compile(state);
      const call: LanguageModelV4CallOptions = {
        ...options.callOptions,
        ...llmConfigOptions(state),
        prompt:
          input instanceof AppendOnlyList
            ? runPrompt(state.systemPrompt(), input, context.run)
            : toPrompt(state.systemPrompt(), input),
        abortSignal: context.signal,
      };
      const tools = await toolsFor(context.tools);
      if (tools.length) Object.assign(call, { tools, toolChoice: { type: 'auto' } });
      const format = state.responseFormat();
      if (format.type === 'json')
        call.responseFormat = { type: 'json', schema: format.schema as never, name: format.name };
      // with a context window the prompt is made from the fitted messages instead
      if (window) {
        const messages = input instanceof AppendOnlyList ? input.toArray() : input;
        const system = state.systemPrompt();
        const prompt = (fitted: readonly Message[]) => toPrompt(system, fitted);
        const done = await callWithinWindow(window, model, call, prompt, state, messages, context, options);
        return done.state.withCurrentStep(
          toStep(done.result, input, model, options.pricing, done.extraUsage),
        );
      }
      const result = await callModel(model, call, state, context, options);
      return state.withCurrentStep(toStep(result, input, model, options.pricing));
    },
  };
}

async function describeTools(tools: ToolSet): Promise<LanguageModelV4FunctionTool[]> {
  return Promise.all(
    Object.entries(tools).map(async ([name, tool]) => ({
      type: 'function' as const,
      name,
      description: toolDescription(tool),
      inputSchema: (await inputJsonSchema(tool.inputSchema)) as LanguageModelV4FunctionTool['inputSchema'],
    })),
  );
}

/**
 * The conversation in the AI SDK's prompt format, for a model with native tool calling.
 *
 * @example
 * toPrompt('You add numbers.', [Message.user('2 + 3?')]);
 * // [{ role: 'system', content: 'You add numbers.' }, { role: 'user', content: [{ type: 'text', text: '2 + 3?' }] }]
 */
export function toPrompt(systemPrompt: string, messages: readonly Message[]): LanguageModelV4Message[] {
  const converted = messages.map(toPromptMessage);
  return systemPrompt ? [{ role: 'system', content: systemPrompt }, ...converted] : converted;
}

/**
 * `toPrompt` for the calls of one run (`DriverContext.run`): the prompt form of its conversation is
 * kept for the run (not as long as its states are kept), and each call converts only the messages
 * added since the last. Providers read the prompt; they must not change it.
 */
function runPrompt(
  systemPrompt: string,
  messages: AppendOnlyList<Message>,
  run: object | undefined,
): LanguageModelV4Message[] {
  if (!run) return toPrompt(systemPrompt, messages.toArray());
  const cached = prompts.get(run);
  const from = cached?.source.isPrefixOf(messages) ? cached.source.size : 0;
  let converted = cached && from > 0 ? cached.converted : AppendOnlyList.empty<LanguageModelV4Message>();
  for (let i = from; i < messages.size; i++)
    converted = converted.append(toPromptMessage(messages.at(i) as Message));
  prompts.set(run, { source: messages, converted });
  const prompt = converted.toArray();
  return systemPrompt ? [{ role: 'system', content: systemPrompt }, ...prompt] : [...prompt];
}

const prompts = new WeakMap<
  object,
  { source: AppendOnlyList<Message>; converted: AppendOnlyList<LanguageModelV4Message> }
>();

function toPromptMessage(m: Message): LanguageModelV4Message {
  if (m.role === 'system') return { role: 'system', content: m.content };
  if (m.role === 'user') return { role: 'user', content: [{ type: 'text', text: m.content }] };
  if (m.role === 'assistant') {
    const content: Extract<LanguageModelV4Message, { role: 'assistant' }>['content'] = [];
    if (m.content) content.push({ type: 'text', text: m.content });
    for (const c of m.toolCalls ?? [])
      content.push({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: c.args });
    return { role: 'assistant', content };
  }
  return {
    role: 'tool',
    content: [
      {
        type: 'tool-result',
        toolCallId: m.toolCallId ?? '',
        toolName: m.toolName ?? '',
        output: m.isError ? { type: 'error-text', value: m.content } : { type: 'text', value: m.content },
      },
    ],
  };
}

function toStep(
  result: CollectedResult,
  input: readonly Message[] | AppendOnlyList<Message>,
  model: LanguageModelV4,
  pricing: PricingTable | undefined,
  extraUsage: Usage = Usage.zero,
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
  return AgentStep.of({
    inputMessages: input,
    outputMessages: [Message.assistant(text, toolCalls)],
    inferenceResponse: InferenceResponse.of({
      text,
      toolCalls,
      finishReason: result.finishReason.unified,
      usage: Usage.add(callUsage(result, model, pricing), extraUsage),
    }),
  });
}

/**
 * Tool arguments arrive as JSON text. Text that does not parse is kept as it is (a string), so
 * the tool executor can tell the model its arguments were not valid JSON; a JSON string is kept as
 * its JSON text too, which does parse, so the model is told it sent a string where an object was
 * expected. An own `__proto__` key is kept as data, as `JSON.parse` makes it.
 *
 * @example
 * parseArgs('{"a":1}'); // { a: 1 }
 * parseArgs('{"a":1');  // '{"a":1' (reported by the tool executor as not valid JSON)
 * parseArgs('"a"');     // '"a"' (reported as "expected object, received string")
 */
export function parseArgs(input: string): unknown {
  if (input.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(input);
  } catch {
    return input;
  }
  return typeof parsed === 'string' ? input : parsed;
}
