/**
 * What a context policy costs per step: runs of 100 to 5,000 steps with ~1 KB tool results against
 * a mock model (no latency), without `context` (the prompt grows: the mock accepts any size) and
 * with `context: { maxInputTokens: 8_000 }` (the default policy), in µs per step.
 */
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import { AgentState, createAgent, defineTool, ExecutionBudget } from '../src/index';
import { collectGarbage, measure, printTable } from './harness';

const page = defineTool({
  description: 'Read a page',
  inputSchema: z.object({ n: z.number() }),
  execute: async ({ n }) => `Page ${n}: ${'x'.repeat(1_000)}`,
});

function model(steps: number) {
  let calls = 0;
  return new MockLanguageModelV4({
    doGenerate: async (call: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> => {
      const n = calls++ % steps;
      const tokens = call.prompt.length * 300;
      return {
        content:
          n === steps - 1
            ? [{ type: 'text', text: 'done' }]
            : [{ type: 'tool-call', toolCallId: `c${n}`, toolName: 'page', input: JSON.stringify({ n }) }],
        finishReason: { unified: n === steps - 1 ? 'stop' : 'tool-calls', raw: undefined },
        usage: {
          inputTokens: { total: tokens, noCache: tokens, cacheRead: 0, cacheWrite: undefined },
          outputTokens: { total: 5, text: 5, reasoning: undefined },
        },
        warnings: [],
      };
    },
  });
}

export default async function run(): Promise<void> {
  const rows: Record<string, string | number>[] = [];
  for (const steps of [100, 1_000, 5_000]) {
    const runs = steps >= 5_000 ? 3 : 5;
    const time = async (context: { maxInputTokens: number } | undefined) => {
      const agent = createAgent({
        model: model(steps),
        tools: { page },
        budget: new ExecutionBudget({ maxSteps: steps }),
        ...(context && { context }),
      });
      collectGarbage();
      return measure(() => agent.execute(AgentState.empty().withUserMessage('read')), { runs, warmup: 1 });
    };
    const plainMs = await time(undefined);
    const windowedMs = await time({ maxInputTokens: 8_000 });
    rows.push({
      steps,
      'no context µs/step': (plainMs * 1000) / steps,
      'context µs/step': (windowedMs * 1000) / steps,
      ratio: windowedMs / plainMs,
    });
  }
  printTable('One agent, N steps with 1 KB tool results (median)', rows);
}
