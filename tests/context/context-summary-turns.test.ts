import type { LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ContextOptions } from '../../src/context/context-window';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { ExecutionStatus } from '../../src/state/execution-status';
import { StopReason } from '../../src/state/stop-reason';
import { defineTool } from '../../src/tools/define-tool';
import { expectWellFormedPrompt, windowedModel } from '../support/windowed-model';

const WINDOW = 8_192;
const TURN_2 = 'Now read the outlook chapter.';
const read = defineTool({
  description: 'Read one page',
  inputSchema: z.object({ page: z.number() }),
  execute: async ({ page }) => `Page ${page}: ${'Revenue grew in every region. '.repeat(34)}`,
});

/**
 * Reads `pages[turn]` pages in each turn, then answers at length (about 2,000 tokens); `nextTurn`
 * starts the next turn's reading (a turn stopped by its budget leaves pages unread).
 */
function reader(pages: readonly number[]) {
  let turn = 0;
  let page = 0;
  const nextTurn = () => {
    turn++;
    page = 0;
  };
  const answer = () => {
    if (page < (pages[turn] ?? 0)) {
      page++;
      const input = JSON.stringify({ page });
      return [{ type: 'tool-call' as const, toolCallId: `t${turn}-p${page}`, toolName: 'read', input }];
    }
    const text = `Turn ${turn + 1} done. ${'Every region grew; the details follow. '.repeat(150)}`;
    return [{ type: 'text' as const, text }];
  };
  return { answer, nextTurn };
}

const userTexts = (call: LanguageModelV4CallOptions) =>
  call.prompt.flatMap((m) =>
    m.role === 'user' ? m.content.flatMap((p) => (p.type === 'text' ? [p.text] : [])) : [],
  );

/** Runs two turns of a stored session; the prompts of the second. */
async function secondTurn(pages: readonly number[], context: ContextOptions, maxSteps = 80) {
  const turns = reader(pages);
  const model = windowedModel(WINDOW, turns.answer);
  const agent = createAgent({
    model: model.model,
    tools: { read },
    budget: new ExecutionBudget({ maxSteps }),
    store: new InMemorySessionStore(),
    context,
  });
  const first = await agent.chat('s', 'Read the annual report.');
  const before = model.prompts.length;
  turns.nextTurn();
  const second = await agent.chat('s', TURN_2);
  return { first, second, model, prompts: model.prompts.slice(before) };
}

/** The indexes of the prompts that lack the turn-2 request. */
const lackingRequest = (prompts: readonly LanguageModelV4CallOptions[]) =>
  prompts.flatMap((call, i) => (userTexts(call).includes(TURN_2) ? [] : [i]));

describe('the task of a later turn is never compacted away', () => {
  it('summarize: every prompt of turn 2 holds the turn-2 request, once the summary has folded all of turn 1', async () => {
    const { first, second, model, prompts } = await secondTurn([20, 30], {
      maxInputTokens: 4_000,
      summarize: true,
    });
    expect(first.status()).toBe(ExecutionStatus.Completed);
    expect(second.status()).toBe(ExecutionStatus.Completed);
    expect(model.summaryCalls.length).toBeGreaterThan(2);
    expect(prompts).toHaveLength(31);
    expect(lackingRequest(prompts)).toEqual([]);
    for (const call of prompts) expectWellFormedPrompt(call, WINDOW, TURN_2);
  });

  it.each([
    ['summarize', true],
    ['trimming', false],
  ])(
    '%s: every prompt of turn 2 holds its request after a turn 1 that ended without an answer',
    async (_, summarize) => {
      const { first, second, prompts } = await secondTurn([30, 8], { maxInputTokens: 2_000, summarize }, 10);
      expect(first.stopReason()).toBe(StopReason.StepsLimitReached);
      expect(second.status()).toBe(ExecutionStatus.Completed);
      expect(prompts).toHaveLength(9);
      expect(lackingRequest(prompts)).toEqual([]);
    },
  );
});
