import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ScriptStep, scriptedDriver } from '../../src/drivers/scripted-driver';
import type { Hook } from '../../src/hooks/hook';
import { replayDriver } from '../../src/replay/replay-driver';
import type { AgentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { firstDifference } from '../../src/state/json-difference';
import { expectReplay, ReplayAssertionError } from '../../src/testing/expect-replay';
import { defineTool } from '../../src/tools/define-tool';

const calls: string[] = [];
const sum = (offset = 0) =>
  defineTool({
    description: 'Add two numbers',
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    execute: async ({ a, b }) => {
      calls.push(`sum ${a} ${b}`);
      return { total: a + b + offset };
    },
  });

const script: ScriptStep[] = [
  {
    toolCalls: [{ id: 'c1', name: 'sum', args: { a: 2, b: 3 } }],
    usage: { inputTokens: 10, outputTokens: 3 },
  },
  {
    toolCalls: [{ id: 'c2', name: 'sum', args: { a: 5, b: 4 } }],
    usage: { inputTokens: 14, outputTokens: 3 },
  },
  { text: 'The total is 9.', usage: { inputTokens: 20, outputTokens: 5 } },
];

const definition = (more: Partial<AgentDefinition> = {}): AgentDefinition => ({
  driver: scriptedDriver(script),
  tools: { sum: sum() },
  systemPrompt: 'You add numbers.',
  budget: new ExecutionBudget({ maxSteps: 10 }),
  ...more,
});

async function recordRun(more: Partial<AgentDefinition> = {}): Promise<AgentState> {
  const done = await createAgent(definition(more)).execute(AgentState.empty().withUserMessage('2 + 3 + 4?'));
  // what a store or a trace keeps
  return AgentState.fromJSON(JSON.parse(JSON.stringify(done)));
}

describe('agent.replay', () => {
  it('replays a recorded run with no divergence and the same final state, running no tool', async () => {
    const recorded = await recordRun();
    calls.length = 0;
    const { state, divergence } = await createAgent(definition()).replay(recorded);
    expect(divergence).toBeNull();
    expect(calls).toEqual([]);
    expect(state.stepCount()).toBe(3);
    expect(state.finalResponse()).toBe('The total is 9.');
    // equal JSON but for the ids and timestamps a run draws fresh (execution id, tool execution ids, clocks)
    expect(
      firstDifference(JSON.parse(JSON.stringify(recorded)), JSON.parse(JSON.stringify(state))),
    ).toBeNull();
    expect(state.agentId()).toBe(recorded.agentId());
    expect(state.steps().map((s) => s.id())).toEqual(recorded.steps().map((s) => s.id()));
  });

  it("tools: 'live' catches a tool whose result changed, at its step and path", async () => {
    const recorded = await recordRun();
    const changed = createAgent(definition({ tools: { sum: sum(1) } }));
    expect((await changed.replay(recorded)).divergence).toBeNull();
    const { divergence } = await changed.replay(recorded, { tools: 'live' });
    expect(divergence).toEqual({
      stepNumber: 1,
      kind: 'tool-result',
      path: 'toolExecutions[0].value.total',
      recorded: 5,
      replayed: 6,
    });
  });

  it("tools: 'live' with unchanged tools runs them and finds no divergence", async () => {
    const recorded = await recordRun();
    calls.length = 0;
    const { divergence } = await createAgent(definition()).replay(recorded, { tools: 'live' });
    expect(divergence).toBeNull();
    expect(calls).toEqual(['sum 2 3', 'sum 5 4']);
  });

  it('a changed system prompt diverges at step 1 in the request', async () => {
    const recorded = await recordRun();
    const { divergence, state } = await createAgent(definition({ systemPrompt: 'You multiply.' })).replay(
      recorded,
    );
    expect(divergence).toMatchObject({ stepNumber: 1, kind: 'request', path: 'request.system' });
    expect(divergence?.replayed).toBe('You multiply.');
    expect(divergence?.recorded).toBe('You add numbers.');
    expect(state.status()).toBe('failed');
  });

  it("a hook's changed decision diverges at the step and call it changed", async () => {
    const recorded = await recordRun();
    const blockSecond: Hook = {
      name: 'no-second-sum',
      beforeToolUse: (_state, { toolCall }) => (toolCall.id === 'c2' ? { block: 'not twice' } : undefined),
    };
    const { divergence } = await createAgent(definition({ hooks: [blockSecond] })).replay(recorded);
    expect(divergence).toMatchObject({ stepNumber: 2, kind: 'tool-result' });
    expect(divergence?.path).toMatch(/^toolExecutions\[0\]\./);
  });

  it("a hook that adds a message before a step diverges in that step's input messages", async () => {
    const recorded = await recordRun();
    const nudge: Hook = {
      name: 'nudge',
      beforeStep: (state) => (state.stepCount() === 2 ? state.withUserMessage('Be brief.') : undefined),
    };
    const { divergence } = await createAgent(definition({ hooks: [nudge] })).replay(recorded);
    expect(divergence).toMatchObject({ stepNumber: 3, kind: 'request', path: 'inputMessages.length' });
  });

  it('a run that stops earlier diverges in its outcome', async () => {
    const recorded = await recordRun();
    const { divergence } = await createAgent(
      definition({ budget: new ExecutionBudget({ maxSteps: 2 }) }),
    ).replay(recorded);
    expect(divergence).toMatchObject({ kind: 'outcome', path: 'stepCount', recorded: 3, replayed: 2 });
  });

  it("fromStep forks: the steps before it are replayed, the rest run live on the agent's own model", async () => {
    const recorded = await recordRun();
    calls.length = 0;
    const newModel = scriptedDriver([{ text: 'Nine.' }]);
    const { state, divergence } = await createAgent(definition({ driver: newModel })).replay(recorded, {
      fromStep: 2,
    });
    expect(divergence).toBeNull();
    expect(state.stepCount()).toBe(2);
    expect(state.steps()[0]?.id()).toBe(recorded.steps()[0]?.id());
    expect(state.finalResponse()).toBe('Nine.');
    expect(calls).toEqual([]);
  });

  it('replayDriver answers from the recording as a plain driver', async () => {
    const recorded = await recordRun();
    const agent = createAgent({ driver: replayDriver(recorded), tools: { sum: sum() } });
    const done = await agent.execute(
      AgentState.empty().withSystemPrompt('You add numbers.').withUserMessage('2 + 3 + 4?'),
    );
    expect(done.finalResponse()).toBe('The total is 9.');
  });

  it('refuses what is not a recording, and a state with no execution', async () => {
    const agent = createAgent(definition());
    await expect(agent.replay('chat-42' as never)).rejects.toMatchObject({ code: 'INVALID_ARGUMENT' });
    await expect(agent.replay(AgentState.empty())).rejects.toThrow(/no execution to replay/);
    await expect(agent.replay(await recordRun(), { tools: 'mocked' as never })).rejects.toThrow(
      /'recorded' or 'live'/,
    );
  });
});

describe('expectReplay', () => {
  it('passes on an equal replay and fails with a readable diff on a divergence', async () => {
    const recorded = await recordRun();
    await expectReplay(createAgent(definition()), recorded);
    const failure = await expectReplay(createAgent(definition({ tools: { sum: sum(1) } })), recorded, {
      tools: 'live',
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ReplayAssertionError);
    expect((failure as Error).message).toBe(
      [
        'The replay diverged at step 1 (tool-result) at toolExecutions[0].value.total',
        '- recorded: 5',
        '+ replayed: 6',
      ].join('\n'),
    );
  });
});

describe('subagents', () => {
  const withResearcher = (offset = 0): AgentDefinition => ({
    driver: scriptedDriver([
      { toolCalls: [{ id: 'r1', name: 'researcher', args: { task: 'Add 2 and 3' } }] },
      { text: 'The researcher says 5.' },
    ]),
    tools: { sum: sum(offset) },
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

  it("replay from their own recording, and a changed tool inside one diverges at the caller's step", async () => {
    const done = await createAgent(withResearcher()).execute(AgentState.empty().withUserMessage('2 + 3?'));
    const recorded = AgentState.fromJSON(JSON.parse(JSON.stringify(done)));
    expect(recorded.steps()[0]?.toolExecutions()[0]?.childState()?.stepCount()).toBe(2);
    calls.length = 0;
    const replay = await createAgent(withResearcher()).replay(recorded);
    expect(replay.divergence).toBeNull();
    expect(calls).toEqual([]);
    expect(replay.state.steps()[0]?.toolExecutions()[0]?.childState()?.stepCount()).toBe(2);

    const { divergence } = await createAgent(withResearcher(1)).replay(recorded, { tools: 'live' });
    expect(divergence).toMatchObject({ stepNumber: 1, kind: 'tool-result' });
    expect(divergence?.path).toMatch(
      /^toolExecutions\[0\]\.childState\.execution\.stepExecutions\[0\]\.step\.toolExecutions\[0\]\.value/,
    );
  });
});
