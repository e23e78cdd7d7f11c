import { mkdir, writeFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { buildRunView, recordTrace, renderRunViewer } from '../../src/inspect/index';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { defineTool } from '../../src/tools/define-tool';
import { launchChromium } from '../support/chromium';
import { windowedModel } from '../support/windowed-model';

const TASK = 'Read the first 20 pages.';

const read = defineTool({
  description: 'Read one page',
  inputSchema: z.object({ page: z.number() }),
  execute: async ({ page }) => `Page ${page}: ${'Rows of numbers, one per line. '.repeat(30)}`,
});

async function recordedCompactingRun() {
  let page = 0;
  const mock = windowedModel(4_000, () => {
    if (page >= 20) return [{ type: 'text', text: 'Done reading.' }];
    page++;
    return [{ type: 'tool-call', toolCallId: `p${page}`, toolName: 'read', input: JSON.stringify({ page }) }];
  });
  const agent = createAgent({
    model: mock.model,
    tools: { read },
    budget: new ExecutionBudget({ maxSteps: 30 }),
    context: { maxInputTokens: 3_000 },
  });
  const recorder = recordTrace({ title: 'Compacting run' });
  const state = await agent.execute(AgentState.empty().withUserMessage(TASK), { inspect: recorder.inspect });
  return { state, trace: recorder.trace() };
}

describe('context.compacted in the trace and the run viewer', () => {
  it('records each compaction with its payload and shows it on the step it shaped', async () => {
    const { state, trace } = await recordedCompactingRun();
    const emitted = trace.entries.filter((e) => e.kind === 'emitted' && e.type === 'context.compacted');
    expect(emitted.length).toBeGreaterThan(0);
    expect(emitted[0]).toMatchObject({
      payload: {
        executionId: state.executionId(),
        strategy: 'tool-results',
        forced: false,
        messagesRemoved: expect.any(Number),
        tokensBefore: expect.any(Number),
        tokensAfter: expect.any(Number),
      },
    });

    const view = buildRunView(trace);
    const steps = view.agents[0]?.steps ?? [];
    const compacted = steps.filter((s) => s.compaction !== null);
    expect(compacted).toHaveLength(emitted.length);
    expect(compacted[0]?.compaction).toMatch(/^tool-results: \d+ messages? removed, [\d,]+ → [\d,]+ tokens$/);
    const events = view.agents[0]?.events ?? [];
    expect(events.filter((e) => e.type === 'context.compacted')).toHaveLength(emitted.length);

    const out = resolve('test-output');
    await mkdir(out, { recursive: true });
    const file = resolve(out, 'run-viewer-compaction.html');
    await writeFile(file, renderRunViewer(trace));
    const browser = await launchChromium('the run viewer');
    try {
      const page = await browser.newPage();
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      await page.goto(pathToFileURL(file).href);
      const notes = page.locator('li.step [data-testid="compaction"]');
      expect(await notes.count()).toBe(emitted.length);
      expect(await notes.first().textContent()).toMatch(
        /^Context compacted · tool-results: \d+ messages? removed/,
      );
      const first = compacted[0]?.number;
      expect(await page.locator(`li.step[data-step="${first}"] [data-testid="compaction"]`).count()).toBe(1);
      expect(problems).toEqual([]);
    } finally {
      await browser.close();
    }
  });
});
