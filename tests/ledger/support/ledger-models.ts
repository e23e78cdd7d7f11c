import type { LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import type { ModelPrice } from '../../../src/drivers/model-call';

export const INPUT_TOKENS = 40;
export const OUTPUT_TOKENS = 5;
export const MAX_OUTPUT = 50;
/** A price per million tokens that makes costs easy to read (1 token in = 1e-6, out = 2e-6). */
export const PRICE: ModelPrice = { inputPerMillion: 1, outputPerMillion: 2 };
/** The real cost of one call of `answering` (its fixed usage). */
export const CALL_COST =
  (INPUT_TOKENS * PRICE.inputPerMillion + OUTPUT_TOKENS * PRICE.outputPerMillion) / 1e6;

const usage = (input: number, output: number): LanguageModelV4GenerateResult['usage'] => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

/** Yields to the event loop: calls of concurrent runs interleave (no timing involved). */
const yieldTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A model that calls `add` until the prompt holds `toolSteps` tool results, then answers; each call
 * reports `promptTokens` in and its whole MAX_OUTPUT out. `gate`, when given, is awaited in every call.
 */
export function answering(
  modelId = 'm',
  toolSteps = 2,
  gate?: () => Promise<void>,
): MockLanguageModelV4 & { calls: number } {
  const model = new MockLanguageModelV4({
    modelId,
    doGenerate: async (options) => {
      model.calls += 1;
      await yieldTurn();
      await gate?.();
      const results = options.prompt.filter((message) => message.role === 'tool').length;
      const content: LanguageModelV4GenerateResult['content'] =
        results < toolSteps
          ? [
              {
                type: 'tool-call',
                toolCallId: `call-${results}`,
                toolName: 'add',
                input: JSON.stringify({ a: results, b: 1 }),
              },
            ]
          : [{ type: 'text', text: 'done' }];
      return {
        content,
        finishReason: { unified: results < toolSteps ? 'tool-calls' : 'stop', raw: undefined },
        usage: usage(promptTokens(options.prompt), MAX_OUTPUT),
        warnings: [],
      };
    },
  }) as MockLanguageModelV4 & { calls: number };
  model.calls = 0;
  return model;
}

/** What a tokenizer of about 4 bytes a token would count for `prompt` (below the ledger's bound: its bytes). */
export const promptTokens = (prompt: unknown): number => Math.ceil(JSON.stringify(prompt).length / 4);

/** One scripted answer: a tool call, or a text. */
export type Answer =
  | { readonly tool: string; readonly input: Record<string, unknown> }
  | { readonly text: string };

/** A model that gives `answers` in order (the last one again after them), each with `tokens` of usage. */
export function scripted(
  modelId: string,
  answers: readonly Answer[],
  tokens: { readonly input: number; readonly output: number } = {
    input: INPUT_TOKENS,
    output: OUTPUT_TOKENS,
  },
): MockLanguageModelV4 & { calls: number } {
  const model = new MockLanguageModelV4({
    modelId,
    doGenerate: async () => {
      const answer = answers[Math.min(model.calls, answers.length - 1)] as Answer;
      model.calls += 1;
      await yieldTurn();
      const content: LanguageModelV4GenerateResult['content'] =
        'tool' in answer
          ? [
              {
                type: 'tool-call',
                toolCallId: `${modelId}-${model.calls}`,
                toolName: answer.tool,
                input: JSON.stringify(answer.input),
              },
            ]
          : [{ type: 'text', text: answer.text }];
      return {
        content,
        finishReason: { unified: 'tool' in answer ? 'tool-calls' : 'stop', raw: undefined },
        usage: usage(tokens.input, tokens.output),
        warnings: [],
      };
    },
  }) as MockLanguageModelV4 & { calls: number };
  model.calls = 0;
  return model;
}

/** The tokens of one call of `scripted` (its default usage). */
export const CALL_TOKENS = INPUT_TOKENS + OUTPUT_TOKENS;
