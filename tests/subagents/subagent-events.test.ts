import { describe, expect, it } from 'vitest';
import {
  type AgentEvent,
  AgentState,
  createAgent,
  type SubagentDefinition,
  scriptedDriver,
} from '../../src/index';

const call = (name: string, task: string) => ({ name, args: { task }, id: `${name}-call` });

describe("onEvent and subagents' events", () => {
  it("receives every subagent's events, at any depth, each naming its agent and parent", async () => {
    const fetcher: SubagentDefinition = {
      description: 'Fetches a page',
      driver: scriptedDriver([{ text: 'page text' }]),
    };
    const researcher: SubagentDefinition = {
      description: 'Researches a topic',
      driver: scriptedDriver([{ toolCalls: [call('fetcher', 'fetch')] }, { text: 'summary' }]),
      subagents: { agents: { fetcher } },
    };
    const root = createAgent({
      driver: scriptedDriver([{ toolCalls: [call('researcher', 'research')] }, { text: 'done' }]),
      subagents: { maxDepth: 2, agents: { researcher } },
    });
    const events: AgentEvent[] = [];
    const state = await root.execute(AgentState.empty().withUserMessage('go'), {
      onEvent: (event) => events.push(event),
    });

    const finished = events.filter((e) => e.type === 'execution.finished');
    expect(finished).toHaveLength(3);
    const agents = new Map(finished.map((e) => [e.agentId, e.parentAgentId]));
    const rootId = state.agentId();
    expect(agents.get(rootId)).toBeNull();
    const researcherId = [...agents].find(([, parent]) => parent === rootId)?.[0];
    expect(researcherId).toBeDefined();
    expect([...agents].find(([, parent]) => parent === researcherId)).toBeDefined();
    // A child's whole run arrives while its caller's tool step runs, before the caller finishes.
    expect(finished.at(-1)?.agentId).toBe(rootId);
    const childSteps = events.filter((e) => e.type === 'step.finished' && e.agentId !== rootId);
    expect(childSteps).toHaveLength(3);
  });

  it('an actor run without onEvent forwards nothing and completes as before', async () => {
    const helper: SubagentDefinition = { description: 'Helps', driver: scriptedDriver([{ text: 'help' }]) };
    const root = createAgent({
      driver: scriptedDriver([{ toolCalls: [call('helper', 'help')] }, { text: 'done' }]),
      subagents: { agents: { helper } },
    });
    const state = await root.execute(AgentState.empty().withUserMessage('go'));
    expect(state.finalResponse()).toBe('done');
  });
});
