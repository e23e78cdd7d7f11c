import type { Summarizer } from '../context/context-summary';
import { type ContextOptions, ContextWindow } from '../context/context-window';
import { assistantOutput } from '../messages/assistant-output';
import { toPromptMessage } from '../messages/prompt-message';
import type { PromptMessage } from '../messages/shapes';
import type { AgentState } from '../state/agent-state';
import { AgentStep, InferenceResponse, type StepRequest } from '../state/agent-step';
import { AppendOnlyList } from '../state/append-only-list';
import type { Message, ProviderMetadata } from '../state/message';
import { Usage } from '../state/usage';
import type { Driver, DriverContext } from './driver';
import {
  type CallableModel,
  type CallOptions,
  callable,
  type LanguageModel,
  type ModelCallSettings,
} from './language-model';
import { reserveCall } from './ledger-call';
import {
  conversationWithCurrentToolTrace,
  currentToolTraceList,
  type MessageCompiler,
} from './message-compiler';
import { callUsage, llmConfigOptions, type ModelCallOptions, type PricingTable } from './model-call';
import { callModels } from './model-fallback';
import type { CollectedResult } from './model-stream';
import { chargedSummarizer, modelSummarizer } from './model-summarizer';
import { describedTools, requestOf } from './request-digest';
import { activeTools, type PrepareStep, stepModel } from './step-settings';
import { callWithinWindow } from './windowed-model-call';

export { parseArgs } from '../messages/assistant-output';
export type { ModelPrice, PricingTable } from './model-call';

/** Options of the model and ReAct drivers: retries and `stream` (ModelCallOptions), and these. */
export interface ModelDriverOptions extends ModelCallOptions {
  /** Prices by model id (`model.modelId`): each step's cost is computed from its usage. */
  readonly pricing?: PricingTable;
  readonly compileMessages?: MessageCompiler;
  /**
   * Call settings passed through to every model call (temperature, maxOutputTokens, toolChoice,
   * providerOptions, ...); the state's `llmConfig` overrides them.
   */
  readonly callOptions?: ModelCallSettings;
  /** Chooses the model, tool choice or tools of each step from its state (the AI SDK's `prepareStep`). */
  readonly prepareStep?: PrepareStep;
  /** Models a state may switch to: `llmConfig.model` (set by a hook or the caller) names one by key. */
  readonly models?: Readonly<Record<string, LanguageModel>>;
  /** Keep every prompt within `maxInputTokens` (see ContextOptions; `createAgent({ context })`). */
  readonly context?: ContextOptions;
  /** Models that take over a step the model before them failed (see `callModels`). */
  readonly fallbackModels?: readonly LanguageModel[];
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
export function modelDriver(languageModel: LanguageModel, options: ModelDriverOptions = {}): Driver {
  const defaultModel = callable(languageModel);
  const compile = options.compileMessages ?? conversationWithCurrentToolTrace;
  const fallbacks = (options.fallbackModels ?? []).map(callable);
  const summarize = options.context?.summarize;
  // anything but true or a model is refused by ContextWindow, naming `summarize`
  const summaryModel =
    summarize === true || (typeof summarize === 'object' && summarize !== null)
      ? summarize === true
        ? languageModel
        : (summarize as LanguageModel)
      : null;
  const window =
    options.context !== undefined &&
    new ContextWindow(options.context, summaryModel ? modelSummarizer(summaryModel, options) : null);
  /** The step's answer: its model call over the chain of models, within the context window if any. */
  const answer = async (
    models: readonly CallableModel[],
    call: CallOptions,
    state: AgentState,
    input: readonly Message[] | AppendOnlyList<Message>,
    context: DriverContext,
    request: StepRequest,
    summarizer?: Summarizer,
  ): Promise<AgentState> => {
    // with a context window the prompt is made from the fitted messages instead
    if (window) {
      const system = state.systemPrompt();
      const version = (models[0] as CallableModel).specificationVersion;
      const prompt = (fitted: readonly Message[]) => toPrompt(system, fitted, version);
      const done = await callWithinWindow(
        window,
        models,
        call,
        prompt,
        state,
        input,
        context,
        options,
        summarizer,
      );
      return done.state.withCurrentStep(
        toStep(done.result, input, done.model, options.pricing, done.extraUsage).withRequest(request),
      );
    }
    const answered = await callModels(models, call, state, context, options);
    return state.withCurrentStep(
      toStep(answered.result, input, answered.model, options.pricing).withRequest(request),
    );
  };
  return {
    name: `model:${defaultModel.provider}/${defaultModel.modelId}`,
    async infer(state, context) {
      const chosen = await options.prepareStep?.(state);
      const chosenModel = stepModel(state, chosen, options.models);
      const model = chosenModel ? callable(chosenModel) : defaultModel;
      const models = [model, ...fallbacks];
      // the default compilation, incrementally and shared with the conversation; else the user's
      const input =
        (compile === conversationWithCurrentToolTrace && currentToolTraceList(state)) || compile(state);
      const version = model.specificationVersion;
      // Object.assign, not spreads followed by keys: on Node 20 those give every call's options a
      // hidden class of their own once call settings or an llmConfig bring keys.
      const call: CallOptions = Object.assign(
        {},
        options.callOptions,
        llmConfigOptions(state),
        chosen?.toolChoice ? { toolChoice: chosen.toolChoice } : undefined,
        {
          prompt:
            input instanceof AppendOnlyList
              ? runPrompt(state.systemPrompt(), input, context.run, version)
              : toPrompt(state.systemPrompt(), input, version),
          abortSignal: context.signal,
        },
      );
      const offered = await describedTools(context.tools);
      const request = requestOf(state, offered.digest);
      const tools = activeTools([...offered.list], chosen);
      if (tools.length) call.tools = tools;
      if (tools.length && !call.toolChoice) call.toolChoice = { type: 'auto' };
      const format = state.responseFormat();
      if (format.type === 'json')
        call.responseFormat = { type: 'json', schema: format.schema as never, name: format.name };
      // the budget ledger's reservation: one for the step, whichever model answers, after retries
      const hold = context.ledger ? await reserveCall(models, call, state, context, options.pricing) : null;
      if (!hold) return answer(models, call, state, input, context, request);
      // the window's summary calls reserve and settle their own (the step's usage counts them too)
      const charged =
        window && summaryModel ? chargedSummarizer(summaryModel, options, { state, context }) : null;
      let answered: AgentState;
      try {
        answered = await answer(models, call, state, input, context, request, charged?.summarize);
      } catch (error) {
        await hold.release();
        throw error;
      }
      const usage = (answered.currentStep() as AgentStep).inferenceResponse().usage;
      await hold.settle(charged ? withoutSummaries(usage, charged.settled()) : usage);
      return answered;
    },
  };
}

/** A step's usage less that of its summary calls, settled on the budget ledger by themselves. */
function withoutSummaries(step: Usage, summaries: Usage): Usage {
  if (summaries === Usage.zero) return step;
  return Usage.of({
    inputTokens: Math.max(0, step.inputTokens - summaries.inputTokens),
    outputTokens: Math.max(0, step.outputTokens - summaries.outputTokens),
    cost: Math.max(0, step.cost - summaries.cost),
  });
}

/**
 * The conversation in the AI SDK's prompt format, for a model with native tool calling.
 *
 * @example
 * toPrompt('You add numbers.', [Message.user('2 + 3?')]);
 * // [{ role: 'system', content: 'You add numbers.' }, { role: 'user', content: [{ type: 'text', text: '2 + 3?' }] }]
 */
export function toPrompt(
  systemPrompt: string,
  messages: readonly Message[],
  version: CallableModel['specificationVersion'] = 'v4',
): PromptMessage[] {
  const converted = messages.map((m) => toPromptMessage(m, version));
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
  version: CallableModel['specificationVersion'],
): PromptMessage[] {
  if (!run) return toPrompt(systemPrompt, messages.toArray(), version);
  const cached = prompts.get(run);
  // A step on a model of the other specification (a per-step model) converts the whole conversation.
  const reuse = cached?.version === version && cached.source.isPrefixOf(messages);
  const from = reuse ? cached.source.size : 0;
  let converted = reuse && from > 0 ? cached.converted : AppendOnlyList.empty<PromptMessage>();
  for (let i = from; i < messages.size; i++)
    converted = converted.append(toPromptMessage(messages.at(i) as Message, version));
  prompts.set(run, { source: messages, converted, version });
  const prompt = converted.toArray();
  return systemPrompt ? [{ role: 'system', content: systemPrompt }, ...prompt] : [...prompt];
}

const prompts = new WeakMap<
  object,
  {
    source: AppendOnlyList<Message>;
    converted: AppendOnlyList<PromptMessage>;
    version: CallableModel['specificationVersion'];
  }
>();

function toStep(
  result: CollectedResult,
  input: readonly Message[] | AppendOnlyList<Message>,
  model: CallableModel,
  pricing: PricingTable | undefined,
  extraUsage: Usage = Usage.zero,
): AgentStep {
  const { text, toolCalls, message } = assistantOutput(result.content);
  return AgentStep.of({
    inputMessages: input,
    outputMessages: [message],
    inferenceResponse: InferenceResponse.of({
      text,
      toolCalls,
      finishReason: result.finishReason.unified,
      ...(result.finishReason.raw !== undefined &&
        result.finishReason.raw !== result.finishReason.unified && {
          rawFinishReason: result.finishReason.raw,
        }),
      ...(result.providerMetadata && { providerMetadata: result.providerMetadata as ProviderMetadata }),
      usage: Usage.add(callUsage(result, model, pricing), extraUsage),
      model: model.modelId,
    }),
  });
}
