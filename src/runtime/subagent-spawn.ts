/**
 * The agent actor's side of a subagent call: what its `spawnSubagent` action does (the chart names
 * the action, the runtime provides it: only the runtime knows the child agents), and the
 * registration of each subagent's machine under the name it is spawned by.
 */
import type { AnyActorLogic } from 'xstate';
import {
  type AgentRef,
  type agentLoop,
  type LoopContext,
  type LoopEvent,
  type LoopInput,
  subagentActor,
} from '../../machines/agentLoop';
import type { AgentActor } from './agent-actor';
import type { NestedIntents } from './nested-intents';
import type { SubagentCalls } from './subagent-calls';

/** What an `assign` action of the agent machine is given (the part `spawnSubagent` reads). */
interface SpawnArgs {
  readonly context: LoopContext;
  readonly event: LoopEvent;
  readonly spawn: unknown;
  readonly self: AgentRef;
}

/**
 * `spawnSubagent`'s work: spawns the child agent actor a `subagent.spawn` event asks for, by the
 * name its subagent is registered under, and hands it to the call that asked
 * (`SubagentCalls.spawned`). The child saves the intent of its steps through this agent
 * (`nested`), up to the root's session.
 */
export function subagentSpawner(subagents: SubagentCalls, nested: NestedIntents): (args: SpawnArgs) => void {
  return ({ context, event, spawn, self }) => {
    if (event.type !== 'subagent.spawn') return;
    const child = subagents.childAgent(event.name);
    // spawned by the name it is registered under (below): subagent names are the definition's, not the chart's
    const spawnByName = spawn as (src: string, options: { id: string; input: LoopInput }) => AgentActor;
    // the child saves the intent of its steps through this agent, up to the root's session
    const saves = context.session !== null || context.intentSave !== null;
    const intentSave = saves ? nested.saverFor(self, event.toolCallId) : undefined;
    // seen as its caller is: an inspector of the caller's system sees the child's states
    const input = child.inputFor(event.state, {
      budget: event.budget,
      reports: context.reports,
      intentSave,
      observed: context.observed,
      ledgerScopes: context.ledgerScopes,
    });
    subagents.spawned(event.id, spawnByName(subagentActor(event.name), { id: event.id, input }));
  };
}

/**
 * Registers each subagent's machine on `machine` as the actor `subagent:<name>` (DESIGN: every
 * actor registered by name; an inline one cannot be restored). A getter: the child agent is built
 * when its name is first looked up (a spawn, a restore), since a definition may list itself.
 */
export function registerSubagents(machine: typeof agentLoop, subagents: SubagentCalls): void {
  const actors = machine.implementations.actors as Record<string, AnyActorLogic>;
  for (const name of subagents.names())
    Object.defineProperty(actors, subagentActor(name), {
      get: () => subagents.childAgent(name).machine,
      enumerable: true,
      configurable: true,
    });
}
