import type { LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SUMMARY_SECTION } from '../../src/context/context-summary';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { ExecutionStatus } from '../../src/state/execution-status';
import type { AgentEvent, ContextCompactedEvent } from '../../src/state/loop-events';
import { defineTool } from '../../src/tools/define-tool';
import { expectWellFormedPrompt, promptTokens, windowedModel } from '../support/windowed-model';

const WINDOW = 8_192;
const TASK = 'Read 40 pages of the annual report.';
const read = defineTool({
  description: 'Read one page',
  inputSchema: z.object({ page: z.number() }),
  execute: async ({ page }) => `Page ${page}: ${'Revenue grew in every region. '.repeat(34)}`,
});

/** Reads `pages` pages, then answers. */
function reader(pages: number) {
  let page = 0;
  return (): LanguageModelV4GenerateResult['content'] => {
    if (page < pages) {
      page++;
      const input = JSON.stringify({ page });
      return [{ type: 'tool-call', toolCallId: `p${page}`, toolName: 'read', input }];
    }
    return [{ type: 'text', text: `Read ${page} pages.` }];
  };
}

const usage = {
  inputTokens: { total: 500, noCache: 500, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: 900, text: 900, reasoning: undefined },
};

/** A summary model that answers each call with `text()`, or throws what `text()` throws. */
function summaryModel(text: () => string) {
  let calls = 0;
  const model = new MockLanguageModelV4({
    doGenerate: async () => {
      calls++;
      return {
        content: [{ type: 'text', text: text() }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage,
        warnings: [],
      };
    },
  });
  return {
    model,
    get calls() {
      return calls;
    },
  };
}

async function run(summarize: MockLanguageModelV4) {
  const mock = windowedModel(WINDOW, reader(40));
  const agent = createAgent({
    model: mock.model,
    tools: { read },
    budget: new ExecutionBudget({ maxSteps: 60 }),
    context: { maxInputTokens: 4_000, summarize },
  });
  const events: AgentEvent[] = [];
  const state = await agent.execute(AgentState.empty().withUserMessage(TASK), {
    onEvent: (e) => events.push(e),
  });
  const compacted = events.filter((e): e is ContextCompactedEvent => e.type === 'context.compacted');
  return { state, compacted, mock };
}

describe('a summarizer that fails falls back to trimming', () => {
  it('a summarizer that throws: the run goes on trimmed, and context.compacted names the error', async () => {
    const summarizer = summaryModel(() => {
      throw new Error('summary service unavailable');
    });
    const { state, compacted, mock } = await run(summarizer.model);

    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.finalResponse()).toBe('Read 40 pages.');
    expect(summarizer.calls).toBeGreaterThan(0);
    expect(compacted.length).toBeGreaterThan(0);
    for (const event of compacted) {
      expect(['tool-results', 'drop-steps']).toContain(event.strategy);
      expect(event.messagesRemoved).toBeGreaterThan(0);
      expect(event.fallback).toEqual({
        reason: 'summarizer-error',
        message: expect.stringContaining('summary service unavailable'),
      });
    }
    expect(state.store().section(SUMMARY_SECTION)).toEqual([]);
    for (const prompt of mock.prompts) expectWellFormedPrompt(prompt, WINDOW, TASK);
  });

  it('an oversized summary is not kept: the run goes on trimmed, and its calls still count', async () => {
    const summarizer = summaryModel(() => 'The report, page by page. '.repeat(400));
    const { state, compacted, mock } = await run(summarizer.model);

    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(summarizer.calls).toBeGreaterThan(0);
    expect(compacted.length).toBeGreaterThan(0);
    for (const event of compacted) {
      expect(['tool-results', 'drop-steps']).toContain(event.strategy);
      expect(event.fallback?.reason).toBe('summary-too-long');
      expect(event.fallback?.message).toMatch(/summary/);
    }
    expect(state.store().section(SUMMARY_SECTION)).toEqual([]);
    for (const prompt of mock.prompts) {
      expectWellFormedPrompt(prompt, WINDOW, TASK);
      expect(JSON.stringify(prompt.prompt)).not.toContain('page by page');
    }
    const mainInput = mock.prompts.reduce((n, p) => n + promptTokens(p), 0);
    expect(state.usage().inputTokens).toBe(mainInput + usage.inputTokens.total * summarizer.calls);
  });

  it('a summary that works carries no fallback', async () => {
    const summarizer = summaryModel(() => 'Pages were read; revenue grew everywhere.');
    const { state, compacted } = await run(summarizer.model);
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(compacted.length).toBeGreaterThan(0);
    for (const event of compacted) {
      expect(event.strategy).toBe('summary');
      expect(event.fallback).toBeUndefined();
    }
  });
});
