/**
 * The Vercel AI SDK: `generateText` with the `echo` tool (zod schema, AI SDK `tool()`) and
 * `stopWhen: isStepCount(N)`. The model is `MockLanguageModelV4` from 'ai/test' whose `doGenerate`
 * plays the script: a `tool-call` part (input as JSON text, finish reason `tool-calls`) until step
 * N, then a text part (finish reason `stop`); usage in the v4 nested shape.
 */
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { generateText, isStepCount, tool } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import { type Adapter, answerAt, type Counters, expectRun, QUESTION, stepAfter, versionOf } from './common';

const usage: LanguageModelV4GenerateResult['usage'] = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

/** The id of the last tool result in an AI SDK prompt (none when the last message is the question). */
function lastToolCallId(prompt: LanguageModelV4CallOptions['prompt']): string | undefined {
  const last = prompt[prompt.length - 1];
  if (last?.role !== 'tool') return undefined;
  const part = last.content[last.content.length - 1];
  return part?.type === 'tool-result' ? part.toolCallId : undefined;
}

/**
 * A MockLanguageModelV4 playing the N-step script. The mock's call log (`doGenerateCalls`) is
 * switched off: it would keep every prompt of every run alive and bill the AI SDK for it.
 */
export function scriptedMockModel(steps: number, counters: Counters): MockLanguageModelV4 {
  const model = new MockLanguageModelV4({
    doGenerate: async (options): Promise<LanguageModelV4GenerateResult> => {
      counters.modelCalls++;
      const answer = answerAt(stepAfter(lastToolCallId(options.prompt)), steps);
      return answer.kind === 'tool'
        ? {
            content: [
              {
                type: 'tool-call',
                toolCallId: answer.id,
                toolName: 'echo',
                input: JSON.stringify({ n: answer.n }),
              },
            ],
            finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
            usage,
            warnings: [],
          }
        : {
            content: [{ type: 'text', text: answer.text }],
            finishReason: { unified: 'stop', raw: 'stop' },
            usage,
            warnings: [],
          };
    },
  });
  Object.defineProperty(model, 'doGenerateCalls', { get: () => [], set: () => {} });
  return model;
}

const counters: Counters = { modelCalls: 0, toolCalls: 0 };

const echo = tool({
  description: 'Echo a number',
  inputSchema: z.object({ n: z.number() }),
  execute: async ({ n }) => {
    counters.toolCalls++;
    return n;
  },
});

export const aiSdkAdapter: Adapter = {
  name: 'AI SDK generateText',
  version: versionOf('ai'),
  counters,
  setup(steps) {
    const model = scriptedMockModel(steps, counters);
    const stopWhen = isStepCount(steps);
    return {
      async run() {
        const result = await generateText({ model, tools: { echo }, prompt: QUESTION, stopWhen });
        let toolCalls = 0;
        for (const step of result.steps) {
          for (const r of step.toolResults) if (r.output === Number(r.toolCallId.slice(5))) toolCalls++;
        }
        expectRun('AI SDK', steps, { modelCalls: result.steps.length, toolCalls, text: result.text });
        return result;
      },
    };
  },
};
