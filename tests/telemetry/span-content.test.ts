import { APICallError, type LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { context, SpanStatusCode } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { MockLanguageModelV4 } from 'ai/test';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import { defineTool } from '../../src/tools/define-tool';
import { memoryTracer } from '../support/otel';

const CARD = '4111 1111 1111 1111';
const usage: LanguageModelV4GenerateResult['usage'] = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};
/** A tool call whose arguments are cut off: the validation error quotes the raw text. */
const brokenCall = (id: string, name: string): LanguageModelV4GenerateResult => ({
  content: [{ type: 'tool-call', toolCallId: id, toolName: name, input: `{"card": "${CARD}"` }],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage,
  warnings: [],
});
const call = (id: string, name: string, input: object): LanguageModelV4GenerateResult => ({
  content: [{ type: 'tool-call', toolCallId: id, toolName: name, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage,
  warnings: [],
});

const pay = defineTool({
  description: 'Pays with a card',
  inputSchema: z.object({ card: z.string() }),
  execute: async ({ card }) => {
    throw new Error(`card ${card} declined`);
  },
});

/** Every place a span can carry text: attributes, status, events, links. */
const everything = (spans: readonly ReadableSpan[]) =>
  JSON.stringify(
    spans.map((s) => ({ attributes: s.attributes, status: s.status, events: s.events, links: s.links })),
  );

/** A run whose tool arguments, tool error and model error all hold the card number. */
function leakyRun(recordContent: boolean, tracer: ReturnType<typeof memoryTracer>['tracer']) {
  const model = new MockLanguageModelV4({
    modelId: 'm-1',
    doGenerate: async () => {
      const n = model.doGenerateCalls.length;
      if (n === 1) return brokenCall('c1', 'pay');
      if (n === 2) return call('c2', 'pay', { card: CARD });
      throw new APICallError({
        message: `Refused: the prompt holds a card number (${CARD})`,
        url: 'http://127.0.0.1/x',
        requestBodyValues: {},
        statusCode: 400,
      });
    },
  });
  return createAgent({ model, tools: { pay }, telemetry: { tracer, recordContent } }).execute(
    AgentState.empty().withUserMessage('Pay the bill'),
  );
}

describe('span content (telemetry.recordContent)', () => {
  const otel = memoryTracer();
  beforeEach(() => {
    otel.reset();
    context.disable();
  });

  it('keeps tool arguments and error messages out of every span without recordContent', async () => {
    const state = await leakyRun(false, otel.tracer);
    expect(state.status()).toBe(ExecutionStatus.Failed);
    // the state keeps them: the run recorded the errors
    expect(JSON.stringify(state.errors())).toContain(CARD);

    expect(otel.spans().length).toBeGreaterThan(0);
    expect(everything(otel.spans())).not.toContain('4111');
    const [invalid, declined] = otel.named('execute_tool pay');
    expect(invalid?.status).toEqual({
      code: SpanStatusCode.ERROR,
      message:
        'INVALID_TOOL_ARGUMENTS (the error message is recorded only with telemetry: { recordContent: true })',
    });
    expect(invalid?.attributes['error.type']).toBe('INVALID_TOOL_ARGUMENTS');
    expect(declined?.status.message).toMatch(/^Error \(the error message is recorded only/);
    const [, , failedChat] = otel.named('chat m-1');
    expect(failedChat?.status.code).toBe(SpanStatusCode.ERROR);
    expect(failedChat?.attributes['error.type']).toBe('AI_APICallError');
    const [run] = otel.named('invoke_agent agent');
    expect(run?.status.code).toBe(SpanStatusCode.ERROR);
  });

  it('records the error messages with recordContent', async () => {
    await leakyRun(true, otel.tracer);
    const [invalid, declined] = otel.named('execute_tool pay');
    expect(invalid?.status.message).toContain(CARD);
    expect(declined?.status.message).toBe(`card ${CARD} declined`);
    const [, , failedChat] = otel.named('chat m-1');
    expect(failedChat?.status.message).toContain(CARD);
  });
});
