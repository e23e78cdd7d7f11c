import {
  APICallError,
  type LanguageModelV4CallOptions,
  type LanguageModelV4GenerateResult,
  type LanguageModelV4Prompt,
} from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { expect } from 'vitest';

/**
 * The mock provider's own token count: 4 characters a token for every text and argument, 4 more
 * per message, plus the tool schemas. Deliberately not the library's estimator.
 */
export function promptTokens(call: Pick<LanguageModelV4CallOptions, 'prompt' | 'tools'>): number {
  let chars = call.tools ? JSON.stringify(call.tools).length : 0;
  let messages = 0;
  for (const message of call.prompt) {
    messages++;
    if (typeof message.content === 'string') {
      chars += message.content.length;
      continue;
    }
    for (const part of message.content) {
      if (part.type === 'text') chars += part.text.length;
      else if (part.type === 'tool-call') chars += part.toolName.length + JSON.stringify(part.input).length;
      else if (part.type === 'tool-result')
        chars +=
          part.toolName.length + JSON.stringify((part.output as { value?: unknown }).value ?? '').length;
    }
  }
  return Math.ceil(chars / 4) + messages * 4;
}

/** OpenAI's refusal of a prompt longer than the window, as the AI SDK reports it. */
export function contextLengthExceeded(window: number, tokens: number): APICallError {
  const message = `This model's maximum context length is ${window} tokens. However, your messages resulted in ${tokens} tokens. Please reduce the length of the messages.`;
  return new APICallError({
    message,
    url: 'http://127.0.0.1/v1/chat/completions',
    requestBodyValues: {},
    statusCode: 400,
    responseBody: JSON.stringify({
      error: { message, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' },
    }),
    isRetryable: false,
  });
}

export interface WindowedModel {
  readonly model: MockLanguageModelV4;
  /** Every prompt the agent's steps sent (summary calls apart), accepted or refused. */
  readonly prompts: LanguageModelV4CallOptions[];
  /** Every summarization call (a call without tools whose instructions ask for a summary). */
  readonly summaryCalls: LanguageModelV4CallOptions[];
  readonly refused: number;
}

/**
 * A model with a `window`-token context that refuses longer prompts with OpenAI's
 * context_length_exceeded error and reports each prompt's tokens as its input usage. `answer`
 * decides each step's reply; summarization calls are answered with a short summary. `countScale`
 * multiplies its token count (a provider whose tokenizer counts more than the estimate).
 */
export function windowedModel(
  window: number,
  answer: (call: LanguageModelV4CallOptions, index: number) => LanguageModelV4GenerateResult['content'],
  options: { readonly countScale?: number } = {},
): WindowedModel {
  const prompts: LanguageModelV4CallOptions[] = [];
  const summaryCalls: LanguageModelV4CallOptions[] = [];
  let refused = 0;
  const model = new MockLanguageModelV4({
    doGenerate: async (call) => {
      const tokens = Math.ceil(promptTokens(call) * (options.countScale ?? 1));
      const isSummary = !call.tools && systemText(call.prompt).includes('summary');
      (isSummary ? summaryCalls : prompts).push(call);
      if (tokens > window) {
        refused++;
        throw contextLengthExceeded(window, tokens);
      }
      const content: LanguageModelV4GenerateResult['content'] = isSummary
        ? [{ type: 'text', text: `Summary ${summaryCalls.length}: pages were read, facts noted.` }]
        : answer(call, prompts.length - 1);
      return {
        content,
        finishReason: content.some((c) => c.type === 'tool-call')
          ? { unified: 'tool-calls', raw: 'tool_calls' }
          : { unified: 'stop', raw: 'stop' },
        usage: {
          inputTokens: { total: tokens, noCache: tokens, cacheRead: 0, cacheWrite: undefined },
          outputTokens: { total: 20, text: 20, reasoning: undefined },
        },
        warnings: [],
      };
    },
  });
  return {
    model,
    prompts,
    summaryCalls,
    get refused() {
      return refused;
    },
  };
}

function systemText(prompt: LanguageModelV4Prompt): string {
  return prompt.map((m) => (m.role === 'system' ? m.content : '')).join('\n');
}

/**
 * Checks one prompt: within `window` tokens, every tool call answered by a result right after its
 * message, every result answering a call of the message before it, and the user's `task` present.
 */
export function expectWellFormedPrompt(call: LanguageModelV4CallOptions, window: number, task: string): void {
  expect(promptTokens(call)).toBeLessThanOrEqual(window);
  const prompt = call.prompt;
  const texts = prompt.flatMap((m) =>
    m.role === 'user' ? m.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])) : [],
  );
  expect(texts).toContain(task);
  let open = new Set<string>();
  for (const message of prompt) {
    if (message.role === 'tool') {
      for (const part of message.content) {
        if (part.type !== 'tool-result') continue;
        expect(open.has(part.toolCallId), `tool result ${part.toolCallId} without its call`).toBe(true);
        open.delete(part.toolCallId);
      }
      continue;
    }
    expect([...open], 'tool calls without their results').toEqual([]);
    open = new Set();
    if (message.role === 'assistant')
      for (const part of message.content) if (part.type === 'tool-call') open.add(part.toolCallId);
  }
  expect([...open], 'tool calls without their results').toEqual([]);
}
