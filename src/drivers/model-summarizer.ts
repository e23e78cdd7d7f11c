import type { Summarizer } from '../context/context-summary';
import type { AgentState } from '../state/agent-state';
import { Usage } from '../state/usage';
import type { DriverContext } from './driver';
import { type CallOptions, callable, type LanguageModel } from './language-model';
import { reserveCall } from './ledger-call';
import { callUsage, type PricingTable } from './model-call';
import { type RetryOptions, withRetries } from './model-retries';

/** The options a summarizer takes from its model driver's: retries, pricing, and the output cap. */
type SummarizerOptions = RetryOptions & {
  readonly pricing?: PricingTable;
  readonly callOptions?: { readonly maxOutputTokens?: number };
};

/** A summarizer charging one step's run on its budget ledger; `settled` is what its calls were charged. */
export interface ChargedSummarizer {
  readonly summarize: Summarizer;
  readonly settled: () => Usage;
}

/**
 * A summarizer that asks `model` (one `doGenerate` call, no tools, retried like a step's call),
 * its usage priced by the driver's pricing table. Its output is capped by
 * `callOptions.maxOutputTokens` when set.
 *
 * @example
 * const summarize = modelSummarizer(model, { maxRetries: 2 });
 * await summarize({ instructions: 'Summarize.', text: transcript }, signal); // { text, usage }
 */
export function modelSummarizer(languageModel: LanguageModel, options: SummarizerOptions): Summarizer {
  return chargedSummarizer(languageModel, options).summarize;
}

/**
 * `modelSummarizer` for the step of `state`, charging the run's budget ledger (`context.ledger`):
 * each summary call reserves its worst case on every scope first (key: the step's key +
 * `:summary<n>`), settles to its real usage after, and releases when it failed. A scope that
 * cannot cover it throws LedgerLimitError before the call (the run stops, as at a step's call).
 */
export function chargedSummarizer(
  languageModel: LanguageModel,
  options: SummarizerOptions,
  step?: { readonly state: AgentState; readonly context: DriverContext },
): ChargedSummarizer {
  const model = callable(languageModel);
  const maxOutputTokens = options.callOptions?.maxOutputTokens;
  let calls = 0;
  let settled = Usage.zero;
  const summarize: Summarizer = async ({ instructions, text }, signal) => {
    const call: CallOptions = {
      prompt: [
        { role: 'system', content: instructions },
        { role: 'user', content: [{ type: 'text', text }] },
      ],
      abortSignal: signal,
    };
    if (maxOutputTokens !== undefined) call.maxOutputTokens = maxOutputTokens;
    calls += 1;
    const hold = step
      ? await reserveCall([model], call, step.state, step.context, options.pricing, `:summary${calls}`)
      : null;
    let result: Awaited<ReturnType<typeof model.doGenerate>>;
    try {
      result = await withRetries(() => model.doGenerate(call), signal, options);
    } catch (error) {
      if (hold) await hold.release();
      throw error;
    }
    let summary = '';
    for (const part of result.content) if (part.type === 'text') summary += part.text;
    const usage = callUsage(result, model, options.pricing);
    if (hold) {
      await hold.settle(usage);
      settled = Usage.add(settled, usage);
    }
    return { text: summary, usage };
  };
  return { summarize, settled: () => settled };
}
