import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { Summarizer } from '../context/context-summary';
import { callUsage, type PricingTable } from './model-call';
import { type RetryOptions, withRetries } from './model-retries';

/**
 * A summarizer that asks `model` (one `doGenerate` call, no tools, retried like a step's call),
 * its usage priced by the driver's pricing table.
 *
 * @example
 * const summarize = modelSummarizer(model, { maxRetries: 2 });
 * await summarize({ instructions: 'Summarize.', text: transcript }, signal); // { text, usage }
 */
export function modelSummarizer(
  model: LanguageModelV4,
  options: RetryOptions & { readonly pricing?: PricingTable },
): Summarizer {
  return async ({ instructions, text }, signal) => {
    const result = await withRetries(
      () =>
        model.doGenerate({
          prompt: [
            { role: 'system', content: instructions },
            { role: 'user', content: [{ type: 'text', text }] },
          ],
          abortSignal: signal,
        }),
      signal,
      options,
    );
    let summary = '';
    for (const part of result.content) if (part.type === 'text') summary += part.text;
    return { text: summary, usage: callUsage(result, model, options.pricing) };
  };
}
