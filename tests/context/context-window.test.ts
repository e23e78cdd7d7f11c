import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { SUMMARY_SECTION } from '../../src/context/context-summary';
import { InvalidContextOptionsError } from '../../src/context/context-window';
import { InvalidDefinitionError } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { ExecutionStatus } from '../../src/state/execution-status';
import type { AgentEvent, ContextCompactedEvent } from '../../src/state/loop-events';
import { defineTool } from '../../src/tools/define-tool';
import { expectWellFormedPrompt, promptTokens, windowedModel } from '../support/windowed-model';

const WINDOW = 8_192;
const FIRST_TASK = 'Read pages 1 to 120 of the report and tell me what it says.';
const SECOND_TASK = 'Now read the appendix, pages 1 to 40.';

/** About 1 KB of text per page. */
const read = defineTool({
  description: 'Read one page of the report',
  inputSchema: z.object({ page: z.number() }),
  execute: async ({ page }) => `Page ${page}: ${'The quarterly figures rose steadily. '.repeat(28)}`,
});

/**
 * Reads `pagesPerTurn[turn]` pages, one a step, then answers; with `notes`, each call comes with
 * that text (the model thinking aloud), which eliding tool results does not shrink.
 */
function reader(pagesPerTurn: readonly number[], notes = '') {
  let turn = 0;
  let page = 0;
  return (_call: LanguageModelV4CallOptions): LanguageModelV4GenerateResult['content'] => {
    if (page < (pagesPerTurn[turn] ?? 0)) {
      page++;
      const call = {
        type: 'tool-call' as const,
        toolCallId: `t${turn}-p${page}`,
        toolName: 'read',
        input: JSON.stringify({ page }),
      };
      return notes ? [{ type: 'text', text: notes }, call] : [call];
    }
    const text = `Turn ${turn + 1}: read ${page} pages.`;
    turn++;
    page = 0;
    return [{ type: 'text', text }];
  };
}

const compactions = (events: AgentEvent[]) =>
  events.filter((e): e is ContextCompactedEvent => e.type === 'context.compacted');

describe('context policies (createAgent({ context }))', () => {
  it('runs 120 steps and a following turn within an 8k window, every prompt whole and within it', async () => {
    const mock = windowedModel(WINDOW, reader([120, 40]));
    const agent = createAgent({
      model: mock.model,
      tools: { read },
      systemPrompt: 'You read reports.',
      budget: new ExecutionBudget({ maxSteps: 200 }),
      context: { maxInputTokens: 7_000 },
    });
    const events: AgentEvent[] = [];
    const first = await agent.execute(AgentState.empty().withUserMessage(FIRST_TASK), {
      onEvent: (e) => events.push(e),
    });

    expect(first.status()).toBe(ExecutionStatus.Completed);
    expect(first.finalResponse()).toBe('Turn 1: read 120 pages.');
    expect(mock.refused).toBe(0);
    expect(mock.prompts).toHaveLength(121);
    for (const prompt of mock.prompts) {
      expectWellFormedPrompt(prompt, WINDOW, FIRST_TASK);
      expect(prompt.prompt[0]).toEqual({ role: 'system', content: 'You read reports.' });
    }
    // the latest step is always sent: each prompt ends with the result of the call before it
    const last = mock.prompts[120]?.prompt.at(-1);
    expect(last).toMatchObject({ role: 'tool', content: [{ toolCallId: 't0-p120' }] });
    // compaction shapes the prompt only: every step and message stays recorded in full
    expect(first.stepCount()).toBe(121);
    expect(first.messages()).toHaveLength(1 + 120 * 2 + 1);
    expect(first.steps()[119]?.toolExecutions()[0]?.value()).toContain('Page 120');
    const compacted = compactions(events);
    expect(compacted.length).toBeGreaterThan(0);
    // in batches: a compaction makes room for several steps
    expect(compacted.length).toBeLessThan(40);
    for (const event of compacted) {
      expect(event.tokensAfter).toBeLessThan(event.tokensBefore);
      expect(event.messagesRemoved).toBeGreaterThan(0);
      expect(event.forced).toBe(false);
      expect(event.executionId).toBe(first.executionId());
    }
    // eliding the old tool results was enough: no step had to be dropped
    expect(compacted.every((e) => e.strategy === 'tool-results')).toBe(true);

    const second = await agent.execute(first.forNextExecution().withUserMessage(SECOND_TASK), {
      onEvent: (e) => events.push(e),
    });
    expect(second.status()).toBe(ExecutionStatus.Completed);
    expect(second.finalResponse()).toBe('Turn 2: read 40 pages.');
    expect(mock.refused).toBe(0);
    for (const prompt of mock.prompts.slice(121)) expectWellFormedPrompt(prompt, WINDOW, SECOND_TASK);
    expect(compactions(events).some((e) => e.executionId === second.executionId())).toBe(true);
  });

  it('without context the same run fails once the prompt outgrows the window (the provider refuses it)', async () => {
    const mock = windowedModel(WINDOW, reader([120]));
    const agent = createAgent({
      model: mock.model,
      tools: { read },
      budget: new ExecutionBudget({ maxSteps: 200 }),
    });
    const done = await agent.execute(AgentState.empty().withUserMessage(FIRST_TASK));
    expect(done.status()).toBe(ExecutionStatus.Failed);
    expect(mock.refused).toBe(1);
    expect(done.stepCount()).toBeLessThan(40);
    expect(done.errors().at(-1)?.message).toContain('maximum context length is 8192 tokens');
  });

  it('drops the oldest whole steps when eliding tool results is not enough', async () => {
    const notes = `Noting what this page says before reading on. ${'Figures, names and dates. '.repeat(24)}`;
    const mock = windowedModel(WINDOW, reader([120], notes));
    const agent = createAgent({
      model: mock.model,
      tools: { read },
      budget: new ExecutionBudget({ maxSteps: 200 }),
      context: { maxInputTokens: 7_000 },
    });
    const events: AgentEvent[] = [];
    const done = await agent.execute(AgentState.empty().withUserMessage(FIRST_TASK), {
      onEvent: (e) => events.push(e),
    });
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(mock.refused).toBe(0);
    for (const prompt of mock.prompts) expectWellFormedPrompt(prompt, WINDOW, FIRST_TASK);
    const strategies = compactions(events).map((e) => e.strategy);
    expect(strategies[0]).toBe('tool-results');
    expect(strategies).toContain('drop-steps');
    // the oldest steps went first: the last prompt no longer has page 1's call, but has page 119's
    const last = JSON.stringify(mock.prompts.at(-1)?.prompt);
    expect(last).not.toContain('"t0-p1"');
    expect(last).toContain('"t0-p119"');
    expect(done.stepCount()).toBe(121);
  });

  it('calibrates its estimate from the provider counts: a provider counting twice as many tokens is not overflowed', async () => {
    const mock = windowedModel(WINDOW, reader([60]), { countScale: 2 });
    const agent = createAgent({
      model: mock.model,
      tools: { read },
      budget: new ExecutionBudget({ maxSteps: 100 }),
      context: { maxInputTokens: 7_000 },
    });
    const done = await agent.execute(AgentState.empty().withUserMessage(FIRST_TASK));
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(mock.refused).toBe(0);
    for (const prompt of mock.prompts) expectWellFormedPrompt(prompt, WINDOW, FIRST_TASK);
  });

  it('summarize: true folds old steps into a summary in batches, kept in the summary section and reused next turn', async () => {
    const mock = windowedModel(WINDOW, reader([120, 40]));
    const agent = createAgent({
      model: mock.model,
      tools: { read },
      budget: new ExecutionBudget({ maxSteps: 200 }),
      context: { maxInputTokens: 7_000, summarize: true },
    });
    const events: AgentEvent[] = [];
    const first = await agent.execute(AgentState.empty().withUserMessage(FIRST_TASK), {
      onEvent: (e) => events.push(e),
    });

    expect(first.status()).toBe(ExecutionStatus.Completed);
    expect(mock.refused).toBe(0);
    for (const prompt of mock.prompts) expectWellFormedPrompt(prompt, WINDOW, FIRST_TASK);
    const compacted = compactions(events);
    expect(compacted.length).toBeGreaterThan(0);
    expect(compacted.every((e) => e.strategy === 'summary')).toBe(true);
    expect(mock.summaryCalls.length).toBeGreaterThan(0);
    expect(mock.summaryCalls.length).toBeLessThan(40);
    for (const call of mock.summaryCalls) expect(call.tools).toBeUndefined();
    // the summary is in the state (so checkpoints keep it) and in the prompts after it was made
    const summary = first.store().section(SUMMARY_SECTION);
    expect(summary).toHaveLength(1);
    expect(summary[0]?.content).toContain(`Summary ${mock.summaryCalls.length}`);
    const restored = AgentState.fromJSON(JSON.parse(JSON.stringify(first)));
    expect(restored.store().section(SUMMARY_SECTION)).toEqual(summary);
    const lastPrompt = JSON.stringify(mock.prompts.at(-1)?.prompt);
    expect(lastPrompt).toContain(`Summary ${mock.summaryCalls.length}`);
    // the summary calls' usage is counted (against the budget too)
    const stepInput = mock.prompts.reduce((sum, call) => sum + promptTokens(call), 0);
    expect(first.usage().inputTokens).toBeGreaterThan(stepInput);
    expect(first.stepCount()).toBe(121);

    const callsBefore = mock.summaryCalls.length;
    const second = await agent.execute(restored.forNextExecution().withUserMessage(SECOND_TASK));
    expect(second.status()).toBe(ExecutionStatus.Completed);
    const secondPrompts = mock.prompts.slice(121);
    for (const prompt of secondPrompts) expectWellFormedPrompt(prompt, WINDOW, SECOND_TASK);
    // the next turn starts from the stored summary without making a new one
    expect(JSON.stringify(secondPrompts[0]?.prompt)).toContain(`Summary ${callsBefore}`);
    expect(mock.refused).toBe(0);
  });

  it('compacts once more and retries the step when the provider refuses a prompt as too long', async () => {
    // the provider's window is smaller than the configured one: the first overflow is a refusal
    const mock = windowedModel(4_000, reader([30]));
    const agent = createAgent({
      model: mock.model,
      tools: { read },
      budget: new ExecutionBudget({ maxSteps: 50 }),
      context: { maxInputTokens: 7_000 },
    });
    const events: AgentEvent[] = [];
    const done = await agent.execute(AgentState.empty().withUserMessage(FIRST_TASK), {
      onEvent: (e) => events.push(e),
    });
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(done.stepCount()).toBe(31);
    // refused once; the window the refusal named holds for the rest of the run
    expect(mock.refused).toBe(1);
    expect(compactions(events)[0]?.forced).toBe(true);
    expect(done.errors()).toEqual([]);
  });

  it('refuses context options that cannot work, naming the field', () => {
    const mock = windowedModel(WINDOW, reader([1]));
    expect(() => createAgent({ model: mock.model, context: { maxInputTokens: 0 } })).toThrow(
      InvalidContextOptionsError,
    );
    expect(() => createAgent({ model: mock.model, context: { maxInputTokens: 8.5e3 + 0.5 } })).toThrow(
      /maxInputTokens/,
    );
    expect(() =>
      createAgent({ model: mock.model, context: { maxInputTokens: 8_000, summarize: 'yes' as never } }),
    ).toThrow(/summarize/);
    expect(() =>
      createAgent({ driver: { name: 'own', infer: (state) => state }, context: { maxInputTokens: 8_000 } }),
    ).toThrow(InvalidDefinitionError);
  });
});
