import { describe, expect, it } from 'vitest';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { SubagentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import type { EventSource } from '../../src/state/event-source';
import type { AgentEvent } from '../../src/state/loop-events';

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

  it('gives each event its source: the step it belongs to and the subagent call it comes from', async () => {
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
    const seen: { event: AgentEvent; source: EventSource }[] = [];
    const state = await root.execute(AgentState.empty().withUserMessage('go'), {
      onEvent: (event, source) => seen.push({ event, source }),
    });

    const rootId = state.agentId();
    const ofAgent = (agentId: string) => seen.filter((s) => s.event.agentId === agentId);
    for (const { source } of ofAgent(rootId)) expect(source.subagent).toBeNull();
    const researcherId = seen.find((s) => s.event.parentAgentId === rootId)?.event.agentId as string;
    const fetcherId = seen.find((s) => s.event.parentAgentId === researcherId)?.event.agentId as string;
    for (const { source } of ofAgent(researcherId))
      expect(source.subagent).toEqual({
        name: 'researcher',
        toolCallId: 'researcher-call',
        callPath: ['researcher-call'],
      });
    for (const { source } of ofAgent(fetcherId))
      expect(source.subagent).toEqual({
        name: 'fetcher',
        toolCallId: 'fetcher-call',
        callPath: ['researcher-call', 'fetcher-call'],
      });

    // The step: the one in flight, or at `step.finished` the one just recorded, of the emitting agent.
    const rootTool = seen.find((s) => s.event.type === 'tool.started' && s.event.agentId === rootId);
    expect(rootTool?.source.step?.requestedToolCalls().map((c) => c.id)).toEqual(['researcher-call']);
    const finished = seen.filter((s) => s.event.type === 'step.finished' && s.event.agentId === rootId);
    expect(finished.map((s) => s.source.step?.id())).toEqual(state.steps().map((step) => step.id()));
    const fetcherTool = seen.find((s) => s.event.type === 'tool.started' && s.event.agentId === researcherId);
    expect(fetcherTool?.source.step?.requestedToolCalls().map((c) => c.id)).toEqual(['fetcher-call']);
    expect(seen.find((s) => s.event.type === 'execution.started')?.source.step).toBeNull();
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
