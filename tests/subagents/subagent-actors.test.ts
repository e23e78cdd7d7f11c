/**
 * DESIGN, The machine: "Every actor is registered by name in `setup({ actors })`; inline actors
 * cannot be restored." A subagent's child agent actor is spawned from the name its caller's machine
 * registers it under (`subagent:<name>`), so a persisted snapshot names it and can be restored.
 */
import { describe, expect, it } from 'vitest';
import type { AnyActorRef, InspectionEvent } from 'xstate';
import type { Driver } from '../../src/drivers/driver';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { SubagentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';

const call = (name: string, task: string, id = `${name}-${task}`) => ({ name, args: { task }, id });

type Implemented = { implementations: { actors: Record<string, unknown> } };
type Spawned = AnyActorRef & { logic: Implemented };

describe('subagents are spawned from a registered actor name (DESIGN: every actor registered by name)', () => {
  it("each child actor's src is its caller's registered name, resolving to the child's own machine", async () => {
    const fetcher: SubagentDefinition = {
      description: 'Fetches a page',
      driver: scriptedDriver([{ text: 'page text' }]),
    };
    let persistedChildren: Record<string, { src: unknown }> = {};
    let root: AnyActorRef | undefined;
    const researching = scriptedDriver([{ toolCalls: [call('fetcher', 'fetch')] }, { text: 'summary' }]);
    const researcherDriver: Driver = {
      name: 'researcher',
      infer: (state, context) => {
        // while the child runs, its caller's persisted snapshot names the child's logic
        const persisted = root?.getPersistedSnapshot() as unknown as { children: typeof persistedChildren };
        persistedChildren = persisted.children;
        return researching.infer(state, context);
      },
    };
    const researcher: SubagentDefinition = {
      description: 'Researches a topic',
      driver: researcherDriver,
      subagents: { agents: { fetcher } },
    };
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [call('researcher', 'research X')] }, { text: 'done' }]),
      subagents: { maxDepth: 2, agents: { researcher } },
    });
    const spawned: Spawned[] = [];
    const inspect = (event: InspectionEvent) => {
      if (event.type !== '@xstate.actor') return;
      const actor = event.actorRef as Spawned;
      if (actor.sessionId === event.rootId) root = actor;
      if (actor.id.startsWith('subagent:')) spawned.push(actor);
    };
    const state = await agent.execute(AgentState.empty().withUserMessage('Go'), { inspect });

    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(spawned.map((a) => [a.id, a.src])).toEqual([
      ['subagent:researcher:researcher-research X', 'subagent:researcher'],
      ['subagent:fetcher:fetcher-fetch', 'subagent:fetcher'],
    ]);
    const [researcherActor, fetcherActor] = spawned as [Spawned, Spawned];
    expect(agent.machine.implementations.actors['subagent:researcher']).toBe(researcherActor.logic);
    expect(researcherActor.logic.implementations.actors['subagent:fetcher']).toBe(fetcherActor.logic);
    expect(persistedChildren['subagent:researcher:researcher-research X']?.src).toBe('subagent:researcher');
  });
});
