import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { recordTrace } from '../../src/inspect/index';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { ExecutionStatus } from '../../src/state/execution-status';
import type { ContextCompactedEvent } from '../../src/state/loop-events';
import { defineTool } from '../../src/tools/define-tool';
import { expectWellFormedPrompt, windowedModel } from '../support/windowed-model';

const WINDOW = 8_192;
const read = defineTool({
  description: 'Read one page',
  inputSchema: z.object({ page: z.number() }),
  execute: async ({ page }) => `Page ${page}: ${'Shipment logged, pallet count checked. '.repeat(27)}`,
});

describe('a subagent with a context policy of its own', () => {
  it('keeps its own prompts within its window, and its compactions are its own events (agent id, parent id)', async () => {
    let page = 0;
    const child = windowedModel(WINDOW, () => {
      if (page >= 60) return [{ type: 'text', text: 'All 60 pages say shipments were on time.' }];
      page++;
      return [
        { type: 'tool-call', toolCallId: `p${page}`, toolName: 'read', input: JSON.stringify({ page }) },
      ];
    });
    const root = createAgent({
      driver: scriptedDriver([
        { toolCalls: [{ id: 'r1', name: 'reader', args: { task: 'Read the 60 pages of the ledger.' } }] },
        { text: 'Shipments were on time.' },
      ]),
      budget: new ExecutionBudget({ maxSteps: 100 }),
      subagents: {
        agents: {
          reader: {
            description: 'Reads long documents',
            model: child.model,
            tools: { read },
            budget: new ExecutionBudget({ maxSteps: 80 }),
            context: { maxInputTokens: 7_000 },
          },
        },
      },
    });
    // a child's events are its own actor's: the inspector (here the trace recorder) sees the whole tree
    const recorder = recordTrace();
    const done = await root.execute(AgentState.empty().withUserMessage('Were shipments on time?'), {
      inspect: recorder.inspect,
    });

    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(done.steps()[0]?.toolExecutions()[0]?.value()).toBe('All 60 pages say shipments were on time.');
    expect(child.refused).toBe(0);
    for (const prompt of child.prompts)
      expectWellFormedPrompt(prompt, WINDOW, 'Read the 60 pages of the ledger.');
    const compacted = recorder
      .trace()
      .entries.filter((e) => e.kind === 'emitted' && e.type === 'context.compacted')
      .map((e) => (e as { payload: Omit<ContextCompactedEvent, 'type'> }).payload);
    expect(compacted.length).toBeGreaterThan(0);
    const childId = done.steps()[0]?.toolExecutions()[0]?.childState()?.agentId();
    for (const event of compacted) {
      expect(event.parentAgentId).toBe(done.agentId());
      expect(event.agentId).toBe(childId);
    }
  });
});
