/**
 * Subagent calls at run time: the subagents an agent may call are tools bound to the calling agent
 * actor, which spawns each child as an actor of its own (so the child lives in the actor tree and
 * the inspector) and releases it when the child's execution has ended.
 */
import type { WorkerInput } from '../../machines/agentLoop';
import type { Driver } from '../drivers/driver';
import type { PricingTable } from '../drivers/model-call';
import type { BudgetLedger } from '../ledger/budget-ledger';
import type { McpServers } from '../mcp/mcp-servers';
import { ExecutionBudget } from '../state/execution-budget';
import { subagentTool } from '../subagents/subagent-tool';
import type { AgentTracing } from '../telemetry/agent-tracing';
import type { TracedModel } from '../telemetry/model-attributes';
import type { Tool, ToolSet } from '../tools/define-tool';
import type { Agent, AgentActor } from './agent-actor';
import type { AgentDefinition, SubagentDefinition } from './agent-definition';
import { forwardSubagentEvents } from './run-events';
import { awaitOutcome } from './run-to-outcome';

/** Where an agent sits in a tree of agents, and what it inherits from its caller. */
export interface Scope {
  readonly depth: number;
  readonly maxDepth: number;
  readonly driver?: Driver;
  readonly tools?: ToolSet;
  readonly subagents?: Readonly<Record<string, SubagentDefinition>>;
  /** The tree's spans (the root's `telemetry`), and the models a child inherits with its caller's driver. */
  readonly tracing?: AgentTracing;
  readonly models?: readonly TracedModel[];
  readonly mcp?: McpServers;
  /** The caller's pricing table: a child with a model and no table of its own prices its calls by it. */
  readonly pricing?: PricingTable;
  /** The root's budget ledger: every agent of the tree charges it. */
  readonly ledger?: BudgetLedger;
}

export interface SubagentCalls {
  /**
   * The tools of one step: `base` (the agent's own), and its subagents bound to the calling agent
   * actor (`worker.agent`), their budgets capped by its budget's remainder.
   */
  toolsFor(worker: WorkerInput, base?: ToolSet): ToolSet;
  /**
   * The child agent actor the agent just spawned for a subagent call (its `subagent.spawn` event's
   * `id`): handed from the spawn (`spawnSubagent`) to the call that asked for it.
   */
  spawned(id: string, child: AgentActor): void;
  /** The child agent called `name`, built on first call (a definition may list itself) and reused. */
  childAgent(name: string): Agent;
  /** The children built so far (to close them with their parent). */
  children(): Iterable<Agent>;
  /** Whether this agent has a subagent called `name`. */
  has(name: string): boolean;
  /** The names of this agent's subagents. */
  names(): Iterable<string>;
}

export type BuildAgent = (definition: AgentDefinition, scope: Scope) => Agent;

export function subagentCalls(
  definition: AgentDefinition,
  scope: Scope,
  inherited: Pick<Scope, 'tracing' | 'models' | 'mcp' | 'pricing'> & {
    readonly driver: Driver;
    readonly tools: ToolSet;
  },
  build: BuildAgent,
): SubagentCalls {
  const { driver, tools, tracing, models, mcp, pricing } = inherited;
  const subagents = definition.subagents?.agents ?? scope.subagents ?? {};
  const subagentNames = new Set(Object.keys(subagents));
  const children = new Map<string, Agent>();
  const childAgent = (name: string): Agent => {
    let child = children.get(name);
    if (!child) {
      child = build(subagents[name] as SubagentDefinition, {
        depth: scope.depth + 1,
        maxDepth: scope.maxDepth,
        driver,
        tools,
        subagents,
        tracing,
        models,
        mcp,
        pricing,
        ledger: scope.ledger ?? definition.ledger,
      });
      children.set(name, child);
    }
    return child;
  };
  // the calls waiting for their child, by spawn id: from the call's `subagent.spawn` to its next
  // line (the agent takes the event, and spawns, as the call sends it)
  const spawning = new Map<string, AgentActor | null>();
  const toolsFor = ({ agent: self, budget: callerBudget }: WorkerInput, base: ToolSet = tools): ToolSet => {
    if (subagentNames.size === 0) return base;
    const bound: Record<string, Tool> = { ...base };
    for (const name of subagentNames) {
      const definitionOf = subagents[name] as SubagentDefinition;
      bound[name] = subagentTool({
        name,
        description: definitionOf.description,
        depth: scope.depth + 1,
        maxDepth: scope.maxDepth,
        callerBudget: () => callerBudget,
        childBudget: definitionOf.budget ?? ExecutionBudget.default(),
        subagentNames,
        run: (state, { signal, budget: childBudget, toolCallId }) => {
          const id = `subagent:${name}:${toolCallId}`;
          spawning.set(id, null);
          self.send({ type: 'subagent.spawn', id, name, state, budget: childBudget, toolCallId });
          const child = spawning.get(id);
          spawning.delete(id);
          if (!child)
            throw new Error(`Subagent '${name}' could not be spawned: its caller is not running tools`);
          tracing?.follow(child, { name: definitionOf.name ?? name, caller: { actor: self, toolCallId } });
          forwardSubagentEvents(self, child, { name, toolCallId });
          return awaitOutcome(child, { signal }).finally(() => self.send({ type: 'subagent.release', id }));
        },
      });
    }
    return bound;
  };
  return {
    toolsFor,
    spawned: (id, child) => {
      if (spawning.has(id)) spawning.set(id, child);
    },
    childAgent,
    children: () => children.values(),
    has: (name) => subagentNames.has(name),
    names: () => subagentNames,
  };
}
