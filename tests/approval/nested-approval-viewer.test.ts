import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  AgentState,
  buildRunView,
  createAgent,
  defineTool,
  renderRunViewer,
  scriptedDriver,
} from '../../src/index';

/** root -> manager -> clerk, whose transfer waits for approval; the root also reads the balance. */
async function waitingTree() {
  const transfer = defineTool({
    description: 'Transfer money',
    inputSchema: z.object({ to: z.string(), amount: z.number() }),
    needsApproval: true,
    execute: async () => 'sent',
  });
  const balance = defineTool({
    description: 'Read the balance',
    inputSchema: z.object({}),
    execute: async () => 100,
  });
  const agent = createAgent({
    driver: scriptedDriver([
      {
        toolCalls: [
          { name: 'balance', args: {}, id: 'b1' },
          { name: 'manager', args: { task: 'pay bob' }, id: 'm1' },
        ],
      },
    ]),
    tools: { balance },
    subagents: {
      agents: {
        manager: {
          description: 'Manages',
          driver: scriptedDriver([{ toolCalls: [{ name: 'clerk', args: { task: 'pay' }, id: 'c1' }] }]),
          subagents: {
            agents: {
              clerk: {
                description: 'Pays',
                driver: scriptedDriver([
                  { toolCalls: [{ name: 'transfer', args: { to: 'bob', amount: 40 }, id: 't1' }] },
                ]),
                tools: { transfer },
              },
            },
          },
        },
      },
    },
  });
  return agent.execute(AgentState.empty().withUserMessage('Pay Bob'));
}

describe('the run viewer shows a waiting subagent', () => {
  it('lists the waiting children as agents, the waiting call on the step, and the pending calls with their path', async () => {
    const waiting = await waitingTree();
    const view = buildRunView(JSON.parse(JSON.stringify(waiting)));
    expect(view.agents.map((a) => [a.depth, a.status, a.spawnedBy?.toolName ?? null])).toEqual([
      [0, 'in_progress', null],
      [1, 'in_progress', 'manager'],
      [2, 'in_progress', 'clerk'],
    ]);
    const [root, manager, clerk] = view.agents;
    expect(root?.pendingApprovals).toEqual([
      {
        toolCallId: 't1',
        toolName: 'transfer',
        args: expect.stringContaining('"amount": 40'),
        path: ['manager', 'clerk'],
      },
    ]);
    expect(clerk?.pendingApprovals.map((p) => [p.toolCallId, p.path])).toEqual([['t1', []]]);
    const step = root?.steps[0];
    expect(step?.inFlight).toBe(true);
    expect(step?.tools.map((t) => [t.callId, t.waiting, t.result])).toEqual([
      ['b1', false, '100'],
      ['m1', true, null],
    ]);
    expect(step?.tools[1]?.childAgent).toBe(manager?.key);
    expect(manager?.steps[0]?.tools[0]).toMatchObject({
      callId: 'c1',
      waiting: true,
      childAgent: clerk?.key,
    });

    const html = renderRunViewer(waiting);
    expect(html).toContain('data-testid="pending-approvals"');
    expect(html).toContain('Waiting for approval');
    expect(html).toMatch(/<code>manager<\/code> › <code>clerk<\/code>/);
  });
});
