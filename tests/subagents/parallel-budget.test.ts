import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { SubagentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { defineTool } from '../../src/tools/define-tool';

const noop = defineTool({
  description: 'Does nothing',
  inputSchema: z.object({}),
  execute: async () => 'ok',
});
const STEP = { inputTokens: 50, outputTokens: 50, cost: 0.01 };

/** A subagent that never finishes on its own: every step calls a tool again. */
const worker: SubagentDefinition = {
  description: 'Works until its budget ends it',
  driver: scriptedDriver([{ toolCalls: [{ name: 'noop', args: {} }], usage: STEP }]),
  tools: { noop },
  budget: new ExecutionBudget({ maxSteps: 50 }),
};

async function sixteenChildren(budget: ExecutionBudget) {
  const calls = Array.from({ length: 16 }, (_, i) => ({
    name: 'worker',
    args: { task: `part ${i}` },
    id: `w${i}`,
  }));
  const root = createAgent({
    driver: scriptedDriver([
      { toolCalls: calls, usage: STEP },
      { text: 'done', usage: STEP },
    ]),
    subagents: { agents: { worker } },
    budget,
    toolConcurrency: 16,
  });
  return root.execute(AgentState.empty().withUserMessage('Split the work'));
}

describe('parallel subagents of one step', () => {
  it('16 children cannot together overspend maxTokens: the run stays within it plus one step of the caller', async () => {
    const done = await sixteenChildren(new ExecutionBudget({ maxTokens: 1000 }));
    expect(done.usage().totalTokens).toBeLessThanOrEqual(1000 + 100);
    const executions = done.steps()[0]?.toolExecutions() ?? [];
    const ran = executions.filter((e) => e.childState() !== null);
    const refused = executions.filter((e) => e.error()?.code === 'SUBAGENT_BUDGET_EXHAUSTED');
    expect(ran.length).toBeGreaterThan(0);
    expect(ran.length + refused.length).toBe(16);
    expect(refused[0]?.error()?.message).toMatch(/pays for \d+ of the 16 subagent calls/);
    // The children that ran are the first the model asked for.
    expect(ran.map((e) => e.toolCallId())).toEqual(
      executions.slice(0, ran.length).map((e) => e.toolCallId()),
    );
  });

  it('and cannot together overspend maxCost', async () => {
    const done = await sixteenChildren(new ExecutionBudget({ maxCost: 0.1 }));
    expect(done.usage().cost).toBeLessThanOrEqual(0.1 + 0.01 + 1e-9);
  });

  it('a budget that pays for all of them splits it evenly, each keeping one step in reserve', async () => {
    const done = await sixteenChildren(new ExecutionBudget({ maxTokens: 10_000 }));
    const executions = done.steps()[0]?.toolExecutions() ?? [];
    expect(executions.every((e) => e.childState() !== null)).toBe(true);
    expect(done.usage().totalTokens).toBeLessThanOrEqual(10_000 + 100);
  });
});
