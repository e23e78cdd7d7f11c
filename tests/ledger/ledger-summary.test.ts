import type { LanguageModelV4GenerateResult, LanguageModelV4Prompt } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { InMemoryBudgetLedger } from '../../src/ledger/in-memory-budget-ledger';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { InvalidArgumentError } from '../../src/state/errors';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { ExecutionStatus } from '../../src/state/execution-status';
import type { AgentEvent } from '../../src/state/loop-events';
import { StopReason } from '../../src/state/stop-reason';
import { defineTool } from '../../src/tools/define-tool';
import { stoppedByLedger } from './support/cap-scenario';
import { MAX_OUTPUT, PRICE, promptTokens } from './support/ledger-models';

/** A tool whose results are long: a few of them pass the context window, which summarizes. */
const read = defineTool({
  description: 'Reads a page',
  inputSchema: z.object({ page: z.number() }),
  execute: async ({ page }) => `page ${page}: ${'lorem ipsum dolor sit amet '.repeat(60)}`,
});

/** The summary model's price: a hundred times the agent's, so summaries are most of the spend. */
const SUMMARY_PRICE = { inputPerMillion: 100, outputPerMillion: 200 };

const isSummaryCall = (prompt: LanguageModelV4Prompt) =>
  prompt[0]?.role === 'system' && String(prompt[0].content).startsWith('You compress the history');

const usage = (input: number, output: number): LanguageModelV4GenerateResult['usage'] => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

/**
 * The agent's model reads `pages` pages (a step each), then answers; the summary
 * model answers each summary call using what its worst case allows (its prompt's bytes in, the
 * whole output cap out). `log` gets `call:<model>` as each call starts.
 */
function models(log: string[], pages = 8, summaryFails = false) {
  let steps = 0;
  const agentModel = new MockLanguageModelV4({
    modelId: 'm',
    doGenerate: async ({ prompt }) => {
      log.push('call:m');
      steps += 1;
      const reading = steps <= pages;
      return {
        content: reading
          ? [{ type: 'tool-call', toolCallId: `read-${log.length}`, toolName: 'read', input: '{"page":1}' }]
          : [{ type: 'text', text: 'done' }],
        finishReason: { unified: reading ? 'tool-calls' : 'stop', raw: undefined },
        usage: usage(promptTokens(prompt), MAX_OUTPUT),
        warnings: [],
      };
    },
  });
  const summaryModel = new MockLanguageModelV4({
    modelId: 'summarizer',
    doGenerate: async ({ prompt }) => {
      log.push('call:summarizer');
      expect(isSummaryCall(prompt)).toBe(true);
      if (summaryFails) throw new Error('summarizer down');
      return {
        content: [{ type: 'text', text: 'Pages were read.' }],
        finishReason: { unified: 'stop', raw: undefined },
        usage: usage(Buffer.byteLength(JSON.stringify(prompt)), MAX_OUTPUT),
        warnings: [],
      };
    },
  });
  return { agentModel, summaryModel };
}

function summarizingAgent(
  ledger: InMemoryBudgetLedger,
  log: string[],
  { pricing = true, outputCap = true, summaryFails = false } = {},
) {
  const { agentModel, summaryModel } = models(log, 8, summaryFails);
  return createAgent({
    model: agentModel,
    tools: { read },
    ledger,
    budget: new ExecutionBudget({ maxSteps: 30 }),
    context: { maxInputTokens: 1_200, summarize: summaryModel },
    modelOptions: {
      pricing: pricing ? { m: PRICE, summarizer: SUMMARY_PRICE } : { m: PRICE },
      callOptions: outputCap ? { maxOutputTokens: MAX_OUTPUT } : {},
      maxRetries: 0,
    },
  });
}

async function run(cap: number | null) {
  const ledger = new InMemoryBudgetLedger();
  if (cap !== null) await ledger.setLimit('tenant:acme', { maxCost: cap });
  const log: string[] = [];
  const events: AgentEvent[] = [];
  const state = await summarizingAgent(ledger, log).execute(
    AgentState.empty().withUserMessage('Read the pages.'),
    {
      ledgerScopes: ['tenant:acme'],
      onEvent: (event) => {
        events.push(event);
        if (event.type === 'ledger.reserved') log.push(`reserved:${(event as { key: string }).key}`);
      },
    },
  );
  return { state, log, events, usage: await ledger.usage('tenant:acme') };
}

describe('the summary calls of a context window, on the budget ledger', () => {
  it('never pass the cap: each summary call reserves its worst case before it is made', async () => {
    const free = await run(null);
    expect(free.state.status()).toBe(ExecutionStatus.Completed);
    const summaries = free.log.filter((e) => e === 'call:summarizer').length;
    expect(summaries).toBeGreaterThan(1);
    // uncapped, every call is charged once: the summaries by their reservations, the steps by theirs
    expect(free.usage.cost).toBeCloseTo(free.state.usage().cost, 12);

    // caps from a few calls' worth to almost the whole run: some stop at a summary, some at a step
    let stopped = 0;
    for (let i = 1; i <= 12; i++) {
      const cap = (free.usage.cost * i) / 13;
      const capped = await run(cap);
      expect(capped.usage.cost).toBeLessThanOrEqual(cap);
      expect(capped.usage).toMatchObject({ reservedCost: 0, reservedTokens: 0 });
      if (capped.state.status() === ExecutionStatus.Stopped) {
        stopped += 1;
        expect(capped.state.stopReason()).toBe(StopReason.TokenLimitReached);
        expect(stoppedByLedger(capped.state, 'tenant:acme')).toBe(true);
      }
      // each summary call's reservation is held before the call is made, under its own key
      let n = 0;
      for (const [index, entry] of capped.log.entries()) {
        if (entry !== 'call:summarizer') continue;
        n += 1;
        expect(capped.log[index - 1]).toMatch(/^reserved:.+:\d+:summary\d+$/);
      }
      expect(n).toBe(capped.log.filter((e) => /^reserved:.+:summary\d+$/.test(e)).length);
    }
    expect(stopped).toBe(12);
  });

  it('a summary model with no price under a cost cap is refused before any summary call, naming the option', async () => {
    const ledger = new InMemoryBudgetLedger();
    await ledger.setLimit('tenant:acme', { maxCost: 1 });
    const log: string[] = [];
    const state = await summarizingAgent(ledger, log, { pricing: false }).execute(
      AgentState.empty().withUserMessage('Read the pages.'),
      { ledgerScopes: ['tenant:acme'] },
    );
    expect(log).not.toContain('call:summarizer');
    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.errors()[0]).toMatchObject({ name: InvalidArgumentError.name, code: 'INVALID_ARGUMENT' });
    expect(state.errors()[0]?.message).toContain("modelOptions.pricing['summarizer']");
    expect(await ledger.usage('tenant:acme')).toMatchObject({ reservedCost: 0, reservedTokens: 0 });
  });

  it('a summary call with no output cap under a token cap is refused, naming modelOptions.callOptions.maxOutputTokens', async () => {
    // the steps are bounded by the state's llmConfig; the summary call takes only the driver's options
    const ledger = new InMemoryBudgetLedger();
    await ledger.setLimit('tenant:acme', { maxTokens: 1_000_000 });
    const log: string[] = [];
    const state = await summarizingAgent(ledger, log, { outputCap: false }).execute(
      AgentState.empty().withLlmConfig({ maxOutputTokens: MAX_OUTPUT }).withUserMessage('Read the pages.'),
      { ledgerScopes: ['tenant:acme'] },
    );
    expect(log).toContain('call:m');
    expect(log).not.toContain('call:summarizer');
    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.errors()[0]).toMatchObject({ name: InvalidArgumentError.name, code: 'INVALID_ARGUMENT' });
    expect(state.errors()[0]?.message).toContain('modelOptions.callOptions.maxOutputTokens');
    expect(await ledger.usage('tenant:acme')).toMatchObject({ reservedCost: 0, reservedTokens: 0 });
  });

  it('a summary call that fails releases its reservation; the window trims instead and the run goes on', async () => {
    const ledger = new InMemoryBudgetLedger();
    await ledger.setLimit('tenant:acme', { maxCost: 10 });
    const log: string[] = [];
    const events: AgentEvent[] = [];
    const state = await summarizingAgent(ledger, log, { summaryFails: true }).execute(
      AgentState.empty().withUserMessage('Read the pages.'),
      { ledgerScopes: ['tenant:acme'], onEvent: (event) => events.push(event) },
    );
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(log).toContain('call:summarizer');
    const summaryEnds = events.filter(
      (e) => e.type === 'ledger.settled' && /:summary\d+$/.test((e as { key: string }).key),
    );
    expect(summaryEnds.length).toBeGreaterThan(0);
    for (const end of summaryEnds) expect(end).toMatchObject({ released: true, cost: 0, tokens: 0 });
    const usage = await ledger.usage('tenant:acme');
    expect(usage).toMatchObject({ reservedCost: 0, reservedTokens: 0 });
    // only the steps' calls were charged
    expect(usage.cost).toBeCloseTo(state.usage().cost, 12);
  });
});
