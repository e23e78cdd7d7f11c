import { APICallError } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { contextOverflowOf } from '../../src/context/context-overflow';
import { InvalidContextOptionsError } from '../../src/context/context-window';
import { estimateMessageTokens, estimateTextTokens } from '../../src/context/token-estimate';
import { ModelRetriesExhaustedError } from '../../src/drivers/model-retries';
import { createAgent } from '../../src/runtime/create-agent';
import { Message } from '../../src/state/message';

const apiError = (statusCode: number, message: string, responseBody?: string) =>
  new APICallError({ message, url: 'http://127.0.0.1/v1', requestBodyValues: {}, statusCode, responseBody });

describe('contextOverflowOf: a provider refusing a prompt as too long', () => {
  it("reads OpenAI's context_length_exceeded with the window and the prompt's tokens", () => {
    const message =
      "This model's maximum context length is 8192 tokens. However, your messages resulted in 9100 tokens. Please reduce the length of the messages.";
    const body = JSON.stringify({ error: { message, code: 'context_length_exceeded' } });
    expect(contextOverflowOf(apiError(400, message, body))).toEqual({ limit: 8192, promptTokens: 9100 });
  });

  it("reads Anthropic's 'prompt is too long'", () => {
    const error = apiError(400, 'prompt is too long: 210000 tokens > 200000 maximum');
    expect(contextOverflowOf(error)).toEqual({ limit: 200000, promptTokens: 210000 });
  });

  it('recognizes a refusal that names no counts, and one inside a retries error', () => {
    expect(
      contextOverflowOf(apiError(413, 'Request too large', '{"error":"context window exceeded"}')),
    ).toEqual({
      limit: null,
      promptTokens: null,
    });
    const inner = apiError(400, 'Input is too long for requested model.');
    expect(contextOverflowOf(new Error('wrapped', { cause: inner }))).not.toBeNull();
  });

  it('is null for other errors: another 400, a 429 or 500 mentioning tokens, a plain error', () => {
    expect(contextOverflowOf(apiError(400, 'Invalid value for temperature'))).toBeNull();
    expect(contextOverflowOf(apiError(429, 'Rate limit: too many tokens per minute'))).toBeNull();
    const exhausted = new ModelRetriesExhaustedError([apiError(500, 'maximum context length is 10 tokens')]);
    expect(contextOverflowOf(exhausted)).toBeNull();
    expect(contextOverflowOf(new Error('boom'))).toBeNull();
    expect(contextOverflowOf(null)).toBeNull();
    expect(contextOverflowOf('context_length_exceeded')).toBeNull();
  });
});

describe('the token estimate', () => {
  it('counts one token per 3 characters, and a message its content, tool calls and framing', () => {
    expect(estimateTextTokens('')).toBe(0);
    expect(estimateTextTokens('What is 2 + 3?')).toBe(5);
    expect(estimateMessageTokens(Message.user('What is 2 + 3?'))).toBe(11);
    const call = Message.assistant('', [{ id: 'c1', name: 'add', args: { a: 2, b: 3 } }]);
    expect(estimateMessageTokens(call)).toBe(6 + 6 + estimateTextTokens('add{"a":2,"b":3}'));
  });
});

describe('context options that cannot work', () => {
  const model = new MockLanguageModelV4({});
  for (const [label, context] of [
    ['null', null],
    ['a number', 8000],
    ['no maxInputTokens', {}],
    ['NaN', { maxInputTokens: Number.NaN }],
    ['Infinity', { maxInputTokens: Number.POSITIVE_INFINITY }],
    ['negative', { maxInputTokens: -8000 }],
    ['too small to hold a task and a step', { maxInputTokens: 999 }],
    ['a string', { maxInputTokens: '8000' }],
    ['summarize: a string', { maxInputTokens: 8000, summarize: 'gpt-4o' }],
    ['summarize: null', { maxInputTokens: 8000, summarize: null }],
  ] as const) {
    it(`are refused at createAgent: ${label}`, () => {
      expect(() => createAgent({ model, context: context as never })).toThrow(InvalidContextOptionsError);
    });
  }
});
