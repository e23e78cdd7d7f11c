import type { AgentState } from '../state/agent-state';
import { AppendOnlyList } from '../state/append-only-list';
import { AgentMachineError } from '../state/errors';
import type { ContextCompactedEvent, SummaryFallback } from '../state/loop-events';
import type { Message } from '../state/message';
import { Usage } from '../state/usage';
import type { ContextOverflow } from './context-overflow';
import {
  conversationIndexes,
  type Folded,
  foldIntoSummary,
  type Summarizer,
  SummarizerFailedError,
  summaryOf,
  withSummary,
} from './context-summary';
import { applyTrimMemory, newTrimMemory, type TrimMemory, trimPrompt } from './prompt-trimming';
import { taskOf } from './prompt-units';
import { TokenCount } from './token-count';
import { estimateMessagesTokens, estimateMessageTokens } from './token-estimate';

/**
 * How an agent keeps its prompts within the model's window (`createAgent({ context })`).
 *
 * @example
 * createAgent({ model, tools, context: { maxInputTokens: 8_000 } });                 // trims old steps
 * createAgent({ model, tools, context: { maxInputTokens: 8_000, summarize: true } }); // summarizes them
 */
export interface ContextOptions {
  /** The most input tokens a model call may be sent (the model's window less the room for its answer). */
  readonly maxInputTokens: number;
  /**
   * Fold old steps into a summary made by a model call instead of eliding and dropping them:
   * `true` for the agent's own model, or another model. The summary is kept in the state's
   * `summary` section; its calls' usage is added to the step's, offers no tools, and counts
   * against the budget.
   */
  readonly summarize?: boolean | SummaryModel;
}

/**
 * A language model of AI SDK 6 or 7 (LanguageModelV3 or V4), as far as a context option needs to
 * know it; the model driver calls it (src/drivers/language-model.ts).
 */
interface SummaryModel {
  readonly specificationVersion: string;
  readonly provider: string;
  readonly modelId: string;
}

/** What one compaction did, as the `context.compacted` event reports it. */
export type ContextCompaction = Pick<
  ContextCompactedEvent,
  'strategy' | 'messagesRemoved' | 'tokensBefore' | 'tokensAfter' | 'forced' | 'fallback'
>;

export interface FitRequest {
  readonly state: AgentState;
  /** The compiled messages (the whole conversation the prompt is made from). */
  readonly messages: readonly Message[] | AppendOnlyList<Message>;
  /** The estimate of what every call sends besides the messages (system prompt, tool schemas). */
  readonly fixedEstimate: number;
  /** The agent run (`DriverContext.run`): decisions and the token count are kept per run. */
  readonly run: object | undefined;
  readonly signal: AbortSignal;
  /** Set when the provider refused the previous attempt at this prompt as too long. */
  readonly refused?: ContextOverflow;
  /** The summarizer for this fit in place of the window's own (the same model, charging the run's budget ledger). */
  readonly summarize?: Summarizer;
}

export interface Fitted {
  /** The state, with a new summary when one was made. */
  readonly state: AgentState;
  /** The messages to send. */
  readonly messages: readonly Message[];
  readonly compaction: ContextCompaction | null;
  /** Usage of the summarization calls. */
  readonly usage: Usage;
  /** The estimate of the prompt sent, for `observe`. */
  readonly estimate: number;
}

/** Share of `maxInputTokens` a compaction brings the prompt down to, so it is not needed every step. */
const LOW_WATER = 0.7;
/** Room counted for a new summary (its instructions ask for at most 300 words). */
const SUMMARY_ESTIMATE = 600;
/** A longer summary is refused (twice its room): the prompt would not come down as planned. */
const MAX_SUMMARY_ESTIMATE = 2 * SUMMARY_ESTIMATE;

interface RunMemory {
  readonly count: TokenCount;
  readonly trim: TrimMemory;
  /** The last prompt fitted, and the compiled conversation it was made from. */
  view: PromptView | null;
  /** `maxInputTokens`, or the provider's window once it named a smaller one refusing a prompt. */
  window: number;
}

/**
 * Applies a context policy to the prompts of a model driver: before each call the prompt is
 * counted (`TokenCount`) and, above `maxInputTokens`, compacted to about 70% of it, by the default
 * trimming or by a summary. The steps recorded in the state are never changed.
 */
export class ContextWindow {
  readonly #runs = new WeakMap<object, RunMemory>();

  constructor(
    readonly options: ContextOptions,
    private readonly summarize: Summarizer | null,
  ) {
    checkContextOptions(options);
  }

  async fit(request: FitRequest): Promise<Fitted> {
    const memory = this.#memoryOf(request.run);
    const fitted = await this.#fit(request, memory);
    const source = request.messages instanceof AppendOnlyList ? request.messages : null;
    memory.view = {
      source,
      summary: this.summarize ? summaryOf(fitted.state) : null,
      messages: fitted.messages,
      estimate: fitted.estimate - request.fixedEstimate,
    };
    return fitted;
  }

  async #fit(request: FitRequest, memory: RunMemory): Promise<Fitted> {
    const { state, refused } = request;
    if (refused?.limit) memory.window = Math.min(memory.window, refused.limit);
    const max = memory.window;
    const current = this.#current(request, memory);
    const estimate = current.estimate + request.fixedEstimate;
    if (refused?.promptTokens) memory.count.observe(estimate, refused.promptTokens);
    const before = memory.count.tokens(estimate);
    if (!refused && before <= max) return unchanged(state, current.messages, estimate);

    const limit = refused ? refusedLimit(refused, max, before) : max;
    const targetEstimate = memory.count.estimateFor(Math.floor(limit * LOW_WATER)) - request.fixedEstimate;
    const forced = refused !== undefined;
    const step = { request, memory, messages: current.messages, before, targetEstimate, forced };
    if (!this.summarize) return trimmed(step, null, Usage.zero);
    const indexes = conversationIndexes(state);
    let folded: Folded | null;
    try {
      folded = await foldIntoSummary(
        state,
        current.messages,
        indexes,
        { targetEstimate, summaryEstimate: SUMMARY_ESTIMATE, chunkEstimate: Math.floor(max / 2) },
        request.summarize ?? this.summarize,
        request.signal,
      );
    } catch (error) {
      if (!(error instanceof SummarizerFailedError) || request.signal.aborted) throw error;
      const message = `${error.message}; the oldest steps were trimmed instead`;
      return trimmed(step, { reason: 'summarizer-error', message }, error.usage);
    }
    if (!folded) return unchanged(state, current.messages, estimate);
    const summary = summaryOf(folded.state) as Message;
    const summaryEstimate = estimateMessageTokens(summary);
    if (summaryEstimate > MAX_SUMMARY_ESTIMATE) {
      const message =
        `The summary was ${summaryEstimate} estimated tokens, more than the ${MAX_SUMMARY_ESTIMATE} ` +
        'it may take; it was not kept, and the oldest steps were trimmed instead';
      return trimmed(step, { reason: 'summary-too-long', message }, folded.usage);
    }
    const messages = withSummary(arrayOf(request.messages), summary, indexes);
    const after = estimateMessagesTokens(messages) + request.fixedEstimate;
    const tokensAfter = memory.count.tokens(after);
    const compaction = { strategy: 'summary' as const, messagesRemoved: folded.removed, forced };
    return {
      state: folded.state,
      messages,
      compaction: { ...compaction, tokensBefore: before, tokensAfter },
      usage: folded.usage,
      estimate: after,
    };
  }

  /**
   * The prompt with the run's decisions (or the summary) applied, and its estimate. While the
   * conversation only grew since the last call (and the summary is the same), only the messages
   * added are looked at: a step costs the same at step 5,000 as at step 50.
   */
  #current(request: FitRequest, memory: RunMemory): { messages: Message[]; estimate: number } {
    const { messages: input, state } = request;
    const summary = this.summarize ? summaryOf(state) : null;
    const view = memory.view;
    if (
      view?.source &&
      input instanceof AppendOnlyList &&
      view.source.isPrefixOf(input) &&
      view.summary === summary
    ) {
      const messages = [...view.messages];
      let estimate = view.estimate;
      for (let i = view.source.size; i < input.size; i++) {
        const message = input.at(i) as Message;
        messages.push(message);
        estimate += estimateMessageTokens(message);
      }
      return { messages, estimate };
    }
    const all = arrayOf(input);
    const messages = this.summarize
      ? withSummary(all, summary, conversationIndexes(state))
      : applyTrimMemory(all, memory.trim);
    return { messages, estimate: estimateMessagesTokens(messages) };
  }

  /** The provider counted `inputTokens` for a prompt `fit` estimated at `estimate`. */
  observe(run: object | undefined, estimate: number, inputTokens: number): void {
    if (run) this.#memoryOf(run).count.observe(estimate, inputTokens);
  }

  #memoryOf(run: object | undefined): RunMemory {
    const fresh = () => ({
      count: new TokenCount(),
      trim: newTrimMemory(),
      window: this.options.maxInputTokens,
      view: null,
    });
    if (!run) return fresh();
    let memory = this.#runs.get(run);
    if (!memory) {
      memory = fresh();
      this.#runs.set(run, memory);
    }
    return memory;
  }
}

/**
 * The window to compact into after a refusal: the provider's limit (already in `max`) when it named
 * both its limit and the prompt's count (the count is then calibrated), else at most half the
 * refused prompt.
 */
function refusedLimit(refused: ContextOverflow, max: number, before: number): number {
  if (refused.limit !== null && refused.promptTokens !== null) return max;
  return Math.min(max, Math.floor(before / 2));
}

interface PromptView {
  /** The compiled conversation, when it came as a shared list (the default compiler). */
  readonly source: AppendOnlyList<Message> | null;
  readonly summary: Message | null;
  readonly messages: readonly Message[];
  /** Estimate of `messages` alone. */
  readonly estimate: number;
}

const arrayOf = (messages: readonly Message[] | AppendOnlyList<Message>): readonly Message[] =>
  messages instanceof AppendOnlyList ? messages.toArray() : messages;

function unchanged(state: AgentState, messages: readonly Message[], estimate: number): Fitted {
  return { state, messages, compaction: null, usage: Usage.zero, estimate };
}

/** A step's prompt to compact, and what the compaction was measured against. */
interface Compacting {
  readonly request: FitRequest;
  readonly memory: RunMemory;
  readonly messages: readonly Message[];
  readonly before: number;
  readonly targetEstimate: number;
  readonly forced: boolean;
}

/**
 * The prompt compacted by the default policy: the trimming policy's own way, or a summarizing
 * policy's fallback (`fallback` says why), which counts the usage of the summary calls made.
 */
function trimmed(step: Compacting, fallback: SummaryFallback | null, usage: Usage): Fitted {
  const { request, memory } = step;
  const { state } = request;
  const trim = trimPrompt(
    step.messages,
    taskOf(state),
    state.executionId(),
    step.targetEstimate,
    memory.trim,
  );
  const estimate = estimateMessagesTokens(trim.messages) + request.fixedEstimate;
  if (!trim.strategy) return Object.assign(unchanged(state, step.messages, estimate), { usage });
  const compaction: ContextCompaction = {
    strategy: trim.strategy,
    messagesRemoved: trim.removed,
    tokensBefore: step.before,
    tokensAfter: memory.count.tokens(estimate),
    forced: step.forced,
    ...(fallback && { fallback }),
  };
  return { state, messages: trim.messages, compaction, usage, estimate };
}

/** Context options that cannot work; the message names the field. */
export class InvalidContextOptionsError extends AgentMachineError {
  static override get name(): string {
    return 'InvalidContextOptionsError';
  }

  constructor(
    readonly field: string,
    detail: string,
  ) {
    super('INVALID_CONTEXT_OPTIONS', `Invalid context options: ${field} ${detail}`);
  }
}

/** The smallest window compaction can work in: the task, the latest step and a summary. */
const MIN_INPUT_TOKENS = 1_000;

function checkContextOptions(options: ContextOptions): void {
  if (typeof options !== 'object' || options === null)
    throw new InvalidContextOptionsError('context', 'must be an object ({ maxInputTokens: 8000 })');
  const max = options.maxInputTokens;
  if (!Number.isInteger(max) || max < MIN_INPUT_TOKENS)
    throw new InvalidContextOptionsError(
      'maxInputTokens',
      `must be a whole number of tokens >= ${MIN_INPUT_TOKENS}, got ${String(max)}`,
    );
  const summarize = options.summarize as unknown;
  if (
    summarize !== undefined &&
    typeof summarize !== 'boolean' &&
    typeof (summarize as { doGenerate?: unknown })?.doGenerate !== 'function'
  )
    throw new InvalidContextOptionsError(
      'summarize',
      'must be true, false or an AI SDK LanguageModel (no doGenerate function)',
    );
}
