/** The decisions a person took, recorded on the tool executions, are taken again (#36). */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { AgentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import type { ApprovalInput } from '../../src/state/approval';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { defineTool } from '../../src/tools/define-tool';

const definition = (): AgentDefinition => ({
  driver: scriptedDriver([
    { toolCalls: [{ id: 'c1', name: 'pay', args: { amount: 10 } }] },
    { toolCalls: [{ id: 'c2', name: 'pay', args: { amount: 20 } }] },
    { text: 'done' },
  ]),
  tools: {
    pay: defineTool({
      description: 'Pay',
      inputSchema: z.object({ amount: z.number() }),
      needsApproval: true,
      execute: async ({ amount }) => `paid ${amount}`,
    }),
  },
  budget: new ExecutionBudget({ maxSteps: 5 }),
});

async function record(first: ApprovalInput, second: ApprovalInput): Promise<AgentState> {
  const agent = createAgent(definition());
  let state = await agent.execute(AgentState.empty().withUserMessage('pay'));
  state = await agent.decide(state, [first]);
  state = await agent.decide(state, [second]);
  return AgentState.fromJSON(JSON.parse(JSON.stringify(state)));
}

describe('replaying decisions on approvals', () => {
  it('approves, edits and rejects (with the reason) as the person did', async () => {
    const recorded = await record(
      { toolCallId: 'c1', type: 'edit', args: { amount: 5 } },
      { toolCallId: 'c2', type: 'reject', reason: 'too much' },
    );
    expect(recorded.status()).toBe('completed');
    const { state, divergence } = await createAgent(definition()).replay(recorded);
    expect(divergence).toBeNull();
    expect(state.status()).toBe('completed');
  });

  it('approves as the person did', async () => {
    const recorded = await record(
      { toolCallId: 'c1', type: 'approve' },
      { toolCallId: 'c2', type: 'reject' },
    );
    const { divergence } = await createAgent(definition()).replay(recorded);
    expect(divergence).toBeNull();
  });
});
