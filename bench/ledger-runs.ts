/**
 * The agent of the ledger benchmark: a mock model that answers at once (a tool call for `toolSteps`
 * steps, then text) with a fixed usage, priced, with maxOutputTokens; and a child process that runs
 * `runs` of them at once against one RedisBudgetLedger when its parent writes `go`, then prints
 * `result <json>` (each run's status and the scope that stopped it, if any).
 */
import { createInterface } from 'node:readline';
import type { LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { z } from 'zod';
import {
  AgentState,
  type BudgetLedger,
  createAgent,
  defineTool,
  ExecutionBudget,
  RedisBudgetLedger,
} from '../src/index';

const add = defineTool({
  description: 'Add two numbers',
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => a + b,
});

const usage: LanguageModelV4GenerateResult['usage'] = {
  inputTokens: { total: 40, noCache: 40, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

export const PRICE = { inputPerMillion: 1, outputPerMillion: 2 };
/** One call's real cost (40 tokens in, 5 out). */
export const CALL_COST = (40 * 1 + 5 * 2) / 1e6;

export function benchAgent(ledger: BudgetLedger | undefined, toolSteps: number) {
  const model = new MockLanguageModelV4({
    modelId: 'm',
    doGenerate: async (options) => {
      const results = options.prompt.filter((message) => message.role === 'tool').length;
      return {
        content:
          results < toolSteps
            ? [{ type: 'tool-call', toolCallId: `c${results}`, toolName: 'add', input: '{"a":1,"b":2}' }]
            : [{ type: 'text', text: 'done' }],
        finishReason: { unified: results < toolSteps ? 'tool-calls' : 'stop', raw: undefined },
        usage,
        warnings: [],
      };
    },
  });
  return createAgent({
    model,
    tools: { add },
    ...(ledger && { ledger }),
    budget: new ExecutionBudget({ maxSteps: toolSteps + 2 }),
    modelOptions: { pricing: { m: PRICE }, callOptions: { maxOutputTokens: 50 } },
  });
}

export const hi = () => AgentState.empty().withUserMessage('hi');

// run as a child process: `node --import tsx bench/ledger-runs.ts <json>`
if (process.argv[1]?.endsWith('ledger-runs.ts') && process.argv[2]) {
  const config = JSON.parse(process.argv[2]) as { port: number; prefix: string; runs: number; scope: string };
  const ledger = new RedisBudgetLedger({
    connection: { host: '127.0.0.1', port: config.port },
    prefix: config.prefix,
  });
  const agent = benchAgent(ledger, 2);
  const lines = createInterface({ input: process.stdin });
  console.log('ready');
  lines.once('line', async () => {
    const states = await Promise.all(
      Array.from({ length: config.runs }, () => agent.execute(hi(), { ledgerScopes: [config.scope] })),
    );
    const outcomes = states.map((s) => ({
      status: s.status(),
      scope: s.stopSignal()?.context.scope ?? null,
      cost: s.usage().cost,
    }));
    console.log(`result ${JSON.stringify(outcomes)}`);
    await ledger.close();
    lines.close();
  });
}
