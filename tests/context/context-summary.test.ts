import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SUMMARY_SECTION } from '../../src/context/context-summary';
import { FileSessionStore } from '../../src/persistence/file-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { ExecutionStatus } from '../../src/state/execution-status';
import { defineTool } from '../../src/tools/define-tool';
import { expectWellFormedPrompt, promptTokens, windowedModel } from '../support/windowed-model';

const WINDOW = 8_192;
const read = defineTool({
  description: 'Read one page',
  inputSchema: z.object({ page: z.number() }),
  execute: async ({ page }) => `Page ${page}: ${'Revenue grew in every region. '.repeat(34)}`,
});

/** Reads `pages` pages per turn, then answers `Turn N done`. */
function reader(pages: number) {
  let turn = 0;
  let page = 0;
  return () => {
    if (page < pages) {
      page++;
      return [
        {
          type: 'tool-call' as const,
          toolCallId: `t${turn}-p${page}`,
          toolName: 'read',
          input: JSON.stringify({ page }),
        },
      ];
    }
    turn++;
    page = 0;
    return [{ type: 'text' as const, text: `Turn ${turn} done` }];
  };
}

describe('summarize with a model of its own, across checkpointed turns', () => {
  it('asks the summary model (not the agent model), and a stored session starts its next turn from the summary', async () => {
    const agentModel = windowedModel(WINDOW, reader(50));
    const summaries: string[] = [];
    const summaryModel = new MockLanguageModelV4({
      doGenerate: async (call) => {
        expect(call.tools).toBeUndefined();
        summaries.push(`Condensed ${summaries.length + 1}`);
        return {
          content: [{ type: 'text', text: summaries.at(-1) as string }],
          finishReason: { unified: 'stop', raw: 'stop' },
          usage: {
            inputTokens: { total: 500, noCache: 500, cacheRead: 0, cacheWrite: undefined },
            outputTokens: { total: 30, text: 30, reasoning: undefined },
          },
          warnings: [],
        };
      },
    });
    const dir = await mkdtemp(join(tmpdir(), 'context-summary-'));
    try {
      const agent = createAgent({
        model: agentModel.model,
        tools: { read },
        budget: new ExecutionBudget({ maxSteps: 80 }),
        store: new FileSessionStore(dir),
        context: { maxInputTokens: 7_000, summarize: summaryModel },
      });

      const first = await agent.chat('s1', 'Read 50 pages of the annual report.');
      expect(first.status()).toBe(ExecutionStatus.Completed);
      expect(agentModel.summaryCalls).toEqual([]);
      expect(summaries.length).toBeGreaterThan(0);
      for (const prompt of agentModel.prompts)
        expectWellFormedPrompt(prompt, WINDOW, 'Read 50 pages of the annual report.');
      // the summary calls' usage (500 input tokens each) is added to the steps', so budgets count it
      const mainInput = agentModel.prompts.reduce((n, p) => n + promptTokens(p), 0);
      expect(first.usage().inputTokens).toBe(mainInput + 500 * summaries.length);

      // a new agent (another process, say) loads the session: the summary came with the checkpoint
      const stored = await new FileSessionStore(dir).load('s1');
      expect(stored?.state.store().section(SUMMARY_SECTION)[0]?.content).toContain(summaries.at(-1));
      const before = agentModel.prompts.length;
      const lastSummary = summaries.at(-1) as string;
      const second = await agent.chat('s1', 'And what about the outlook?');
      expect(second.status()).toBe(ExecutionStatus.Completed);
      const next = JSON.stringify(agentModel.prompts[before]?.prompt);
      expect(next).toContain(lastSummary);
      for (const prompt of agentModel.prompts.slice(before))
        expectWellFormedPrompt(prompt, WINDOW, 'And what about the outlook?');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
