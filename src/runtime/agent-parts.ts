/**
 * What an agent is built from: its definition's parts, or its caller's where a subagent has none of
 * its own (driver, tools and MCP servers, pricing, ledger, telemetry), and how a run takes its state.
 */
import { z } from 'zod';
import type { Driver } from '../drivers/driver';
import type { PricingTable } from '../drivers/model-call';
import { modelDriver } from '../drivers/model-driver';
import type { ResponseSchema } from '../hooks/structured-output-guard';
import type { BudgetLedger } from '../ledger/budget-ledger';
import { McpServers } from '../mcp/mcp-servers';
import type { SessionStore } from '../persistence/session-store';
import type { ResponseFormat } from '../state/agent-context';
import type { AgentState } from '../state/agent-state';
import { ExecutionBudget } from '../state/execution-budget';
import type { AgentTracing } from '../telemetry/agent-tracing';
import type { TracedModel } from '../telemetry/model-attributes';
import type { ToolSet } from '../tools/define-tool';
import type { AgentDefinition } from './agent-definition';
import { upgradeState } from './agent-migrations';
import type { Scope } from './subagent-calls';

export interface AgentParts {
  readonly budget: ExecutionBudget;
  readonly store: SessionStore | undefined;
  /** The driver as the agent's subagents inherit it; `inference`: as the loop calls it (traced when the agent is). */
  readonly driver: Driver;
  readonly inference: Driver;
  readonly pricing: PricingTable | undefined;
  readonly tools: ToolSet;
  /** The MCP servers this agent made (it closes them); `mcp`: those it uses (its caller's without tools of its own). */
  readonly ownMcp: McpServers | undefined;
  readonly mcp: McpServers | undefined;
  readonly tracing: AgentTracing | undefined;
  /** The models a chat span may name. */
  readonly models: readonly TracedModel[] | undefined;
  readonly ledger: BudgetLedger | undefined;
  /** The root's: a subagent's approvals are signed by its root. */
  readonly approvalSecret: string | undefined;
  /** The one place a run takes a saved state: a session saved by an older version is migrated here. */
  readonly upgrade: (state: AgentState) => AgentState;
  /** The state a run starts with: upgraded, with the definition's system prompt and response format. */
  readonly prepare: (state: AgentState) => AgentState;
}

export function agentParts(definition: AgentDefinition, scope: Scope): AgentParts {
  // a subagent without a pricing table of its own prices its model's calls by its caller's
  const pricing = definition.modelOptions?.pricing ?? scope.pricing;
  const driver = driverOf(definition, scope, pricing);
  // Tools and MCP servers go together: a subagent with neither uses its caller's.
  const ownsTools = definition.tools !== undefined || definition.mcpServers !== undefined;
  const ownMcp = definition.mcpServers && new McpServers(definition.mcpServers);
  const { tracing } = scope;
  const models = tracing && tracedModels(definition, scope);
  return {
    budget: definition.budget ?? ExecutionBudget.default(),
    store: definition.store,
    driver,
    inference: tracing ? tracing.traceDriver(driver, models ?? []) : driver,
    pricing,
    tools: (ownsTools ? definition.tools : scope.tools) ?? {},
    ownMcp,
    mcp: ownsTools ? ownMcp : scope.mcp,
    tracing,
    models,
    // a subagent charges its caller's ledger (and scopes: `spawnSubagent`)
    ledger: scope.ledger ?? definition.ledger,
    approvalSecret: scope.depth === 0 ? definition.approvalSecret : undefined,
    ...preparation(definition, scope),
  };
}

function driverOf(definition: AgentDefinition, scope: Scope, pricing: PricingTable | undefined): Driver {
  if (definition.driver) return definition.driver;
  if (!definition.model) return scope.driver as Driver;
  return modelDriver(definition.model, {
    ...definition.modelOptions,
    ...(pricing && { pricing }),
    ...(definition.context !== undefined && { context: definition.context }),
    fallbackModels: definition.fallbackModels ?? definition.modelOptions?.fallbackModels,
  });
}

function preparation(definition: AgentDefinition, scope: Scope): Pick<AgentParts, 'upgrade' | 'prepare'> {
  const responseFormat = definition.responseFormat && jsonResponseFormat(definition.responseFormat);
  const upgrade = (state: AgentState) => (scope.depth === 0 ? upgradeState(definition, state) : state);
  const prepare = (state: AgentState) => {
    let prepared = upgrade(state);
    if (definition.systemPrompt && prepared.systemPrompt() === '') {
      prepared = prepared.withSystemPrompt(definition.systemPrompt);
    }
    if (responseFormat && prepared.responseFormat().type === 'text') {
      prepared = prepared.withResponseFormat(responseFormat);
    }
    return prepared;
  };
  return { upgrade, prepare };
}

/** The models a chat span may name: the agent's own (first the one it asks), or those of the caller's driver. */
function tracedModels(definition: AgentDefinition, scope: Scope): readonly TracedModel[] {
  if (!definition.model) return definition.driver ? [] : (scope.models ?? []);
  const options = definition.modelOptions;
  return [
    definition.model,
    ...(definition.fallbackModels ?? options?.fallbackModels ?? []),
    ...Object.values(options?.models ?? {}),
  ];
}

function jsonResponseFormat(schema: ResponseSchema): ResponseFormat {
  if (!(schema instanceof z.ZodType)) return { type: 'json' };
  return { type: 'json', schema: z.toJSONSchema(schema, { target: 'draft-7' }) as Record<string, unknown> };
}
