/**
 * An agent keeps its replay agents between replays (`verifyUpgrade` replays every session of a
 * store through one agent, #47): each replay, one after another or at the same time as others,
 * gives what it gives on an agent that never replayed anything.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { Hook } from '../../src/hooks/hook';
import type { ReplayOptions, ReplayResult } from '../../src/replay/replay-options';
import type { AgentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { firstDifference } from '../../src/state/json-difference';
import { defineTool } from '../../src/tools/define-tool';

const sum = (offset: number) =>
  defineTool({
    description: 'Add two numbers',
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    execute: async ({ a, b }) => ({ total: a + b + offset }),
  });

const nudge: Hook = {
  name: 'nudge',
  beforeStep: (state) => (state.stepCount() === 1 ? state.withMetadata('nudged', true) : undefined),
};

/** An agent that asks its researcher subagent (which adds with `sum`), then answers. */
const definition = (more: { offset?: number; systemPrompt?: string } = {}): AgentDefinition => ({
  driver: scriptedDriver([
    { toolCalls: [{ id: 'r1', name: 'researcher', args: { task: 'Add 2 and 3' } }] },
    { toolCalls: [{ id: 'c1', name: 'sum', args: { a: 5, b: 4 } }] },
    { text: 'The total is 9.' },
  ]),
  tools: { sum: sum(more.offset ?? 0) },
  systemPrompt: more.systemPrompt ?? 'You add numbers.',
  hooks: [nudge],
  budget: new ExecutionBudget({ maxSteps: 10 }),
  subagents: {
    agents: {
      researcher: {
        description: 'Adds numbers',
        driver: scriptedDriver([
          { toolCalls: [{ id: 's1', name: 'sum', args: { a: 2, b: 3 } }] },
          { text: '5' },
        ]),
      },
    },
  },
});

async function record(more: Parameters<typeof definition>[0]): Promise<AgentState> {
  const done = await createAgent(definition(more)).execute(AgentState.empty().withUserMessage('2 + 3 + 4?'));
  return AgentState.fromJSON(JSON.parse(JSON.stringify(done)));
}

/** The same replay on a new agent of the same definition (one that never replayed before). */
const alone = (recorded: AgentState, options?: ReplayOptions) =>
  createAgent(definition()).replay(recorded, options);

function expectSame(kept: ReplayResult, fresh: ReplayResult): void {
  expect(kept.divergence).toEqual(fresh.divergence);
  expect(kept.state.status()).toBe(fresh.state.status());
  const json = (state: AgentState) => JSON.parse(JSON.stringify(state));
  // a failed model call's step gets an id drawn fresh (as any run's ids): all else is the same
  const difference = firstDifference(json(fresh.state), json(kept.state));
  if (fresh.state.status() === 'failed') expect(difference?.path ?? '').toMatch(/^(|.*\.step\.id)$/);
  else expect(difference).toBeNull();
}

describe('an agent replaying many recordings', () => {
  it('replays each one after another, and several at once, as an agent that never replayed', async () => {
    const same = await record({});
    const otherPrompt = await record({ systemPrompt: 'You multiply.' });
    const otherSum = await record({ offset: 1 });
    const cases: [AgentState, ReplayOptions | undefined][] = [
      [same, undefined],
      [otherPrompt, undefined],
      [otherSum, { tools: 'live' }],
      [same, { tools: 'live' }],
      [otherSum, undefined],
      [same, undefined],
    ];
    const expected = await Promise.all(cases.map(([recorded, options]) => alone(recorded, options)));
    // what the cases show: none, the root's request, a tool result inside the subagent
    expect(expected.map((r) => r.divergence?.path ?? null)).toEqual([
      null,
      'request.system',
      expect.stringMatching(/^toolExecutions\[0\]\.childState\..*\.value\.total$/),
      null,
      null,
      null,
    ]);

    const agent = createAgent(definition());
    for (const [i, [recorded, options]] of cases.entries())
      expectSame(await agent.replay(recorded, options), expected[i] as ReplayResult);
    const atOnce = await Promise.all(cases.map(([recorded, options]) => agent.replay(recorded, options)));
    for (const [i, result] of atOnce.entries()) expectSame(result, expected[i] as ReplayResult);
  });
});
