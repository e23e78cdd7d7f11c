import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { AgentState } from '../state/agent-state';
import { AgentMachineError } from '../state/errors';
import type { Message } from '../state/message';
import { Usage } from '../state/usage';
import type { ContextOverflow } from './context-overflow';
import {
  conversationIndexes,
  foldIntoSummary,
  type Summarizer,
  summaryOf,
  withSummary,
} from './context-summary';
import { applyTrimMemory, newTrimMemory, type TrimMemory, trimPrompt } from './prompt-trimming';
import { TokenCount } from './token-count';
import { estimateMessagesTokens } from './token-estimate';

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
  readonly summarize?: boolean | LanguageModelV4;
}

/** What one compaction did, as the `context.compacted` event reports it. */
export interface ContextCompaction {
  /** `tool-results`: old tool results elided; `drop-steps`: old steps dropped too; `summary`: folded. */
  readonly strategy: 'tool-results' | 'drop-steps' | 'summary';
  readonly messagesRemoved: number;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** True when the provider had refused the prompt as too long. */
  readonly forced: boolean;
}

export interface FitRequest {
  readonly state: AgentState;
  /** The compiled messages (the whole conversation the prompt is made from). */
  readonly messages: readonly Message[];
  /** The estimate of what every call sends besides the messages (system prompt, tool schemas). */
  readonly fixedEstimate: number;
  /** The agent run (`DriverContext.run`): decisions and the token count are kept per run. */
  readonly run: object | undefined;
  readonly signal: AbortSignal;
  /** Set when the provider refused the previous attempt at this prompt as too long. */
  readonly refused?: ContextOverflow;
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

interface RunMemory {
  readonly count: TokenCount;
  readonly trim: TrimMemory;
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
    const { state, refused } = request;
    if (refused?.limit) memory.window = Math.min(memory.window, refused.limit);
    const max = memory.window;
    const indexes = this.summarize ? conversationIndexes(state) : null;
    const current = indexes
      ? withSummary(request.messages, summaryOf(state), indexes)
      : applyTrimMemory(request.messages, memory.trim);
    const estimate = estimateMessagesTokens(current) + request.fixedEstimate;
    if (refused?.promptTokens) memory.count.observe(estimate, refused.promptTokens);
    const before = memory.count.tokens(estimate);
    if (!refused && before <= max) return unchanged(state, current, estimate);

    const limit = refused ? refusedLimit(refused, max, before) : max;
    const targetEstimate = memory.count.estimateFor(Math.floor(limit * LOW_WATER)) - request.fixedEstimate;
    if (indexes && this.summarize) {
      const folded = await foldIntoSummary(
        state,
        current,
        indexes,
        { targetEstimate, summaryEstimate: SUMMARY_ESTIMATE, chunkEstimate: Math.floor(max / 2) },
        this.summarize,
        request.signal,
      );
      if (!folded) return unchanged(state, current, estimate);
      const messages = withSummary(request.messages, summaryOf(folded.state), indexes);
      const after = estimateMessagesTokens(messages) + request.fixedEstimate;
      const compaction = {
        strategy: 'summary' as const,
        messagesRemoved: folded.removed,
        tokensBefore: before,
        tokensAfter: memory.count.tokens(after),
        forced: refused !== undefined,
      };
      return { state: folded.state, messages, compaction, usage: folded.usage, estimate: after };
    }
    const trimmed = trimPrompt(current, state.executionId(), targetEstimate, memory.trim);
    if (!trimmed.strategy) return unchanged(state, current, estimate);
    const after = estimateMessagesTokens(trimmed.messages) + request.fixedEstimate;
    const compaction = {
      strategy: trimmed.strategy,
      messagesRemoved: trimmed.removed,
      tokensBefore: before,
      tokensAfter: memory.count.tokens(after),
      forced: refused !== undefined,
    };
    return { state, messages: trimmed.messages, compaction, usage: Usage.zero, estimate: after };
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

function unchanged(state: AgentState, messages: readonly Message[], estimate: number): Fitted {
  return { state, messages, compaction: null, usage: Usage.zero, estimate };
}

/** Context options that cannot work; the message names the field. */
export class InvalidContextOptionsError extends AgentMachineError {
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
