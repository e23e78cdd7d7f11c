import type { ContextOptions } from '../context/context-window';
import type { Driver } from '../drivers/driver';
import type { LanguageModel } from '../drivers/language-model';
import type { ModelDriverOptions } from '../drivers/model-driver';
import type { ErrorPolicyOptions } from '../hooks/error-policy';
import type { Hook } from '../hooks/hook';
import type { ResponseSchema } from '../hooks/structured-output-guard';
import type { BudgetLedger } from '../ledger/budget-ledger';
import { MCP_SERVER_NAME, type McpServersConfig, mcpConfigProblem } from '../mcp/mcp-server-config';
import type { SessionStore } from '../persistence/session-store';
import { AgentMachineError } from '../state/errors';
import { ExecutionBudget } from '../state/execution-budget';
import type { SubagentsConfig } from '../subagents/subagent-definition';
import type { TelemetryOptions } from '../telemetry/telemetry-options';
import type { ToolSet } from '../tools/define-tool';
import { type AgentMigration, versionProblem } from './agent-migrations';

/** Everything that makes an agent. `model` or `driver` is required. */
export interface AgentDefinition {
  readonly name?: string;
  readonly description?: string;
  /** Any AI SDK language model: AI SDK 6 (LanguageModelV3) or AI SDK 7 (LanguageModelV4). */
  readonly model?: LanguageModel;
  /**
   * Models that take over a step `model` failed (an error that is not retryable, or retries run
   * out), in order; the step records which model answered (`step.model()`) and its cost uses that
   * model's pricing. Each gets the same retries.
   */
  readonly fallbackModels?: readonly LanguageModel[];
  /** Model driver settings (retries, pricing, message compiler) when `model` is given. */
  readonly modelOptions?: ModelDriverOptions;
  /**
   * Keep every prompt within the model's window: `{ maxInputTokens }` elides old tool results and
   * drops old steps as needed; `summarize: true` (or a model) folds them into a summary instead.
   * A prompt the provider refuses as too long is compacted once more and sent again. Needs `model`.
   */
  readonly context?: ContextOptions;
  /** A driver of your own (scripted, ReAct, ...) instead of `model`. */
  readonly driver?: Driver;
  readonly tools?: ToolSet;
  /**
   * The final answer must be JSON matching this schema (zod): the model is given it as its response
   * format, each final answer is validated, `state.structuredOutput()` holds the parsed value.
   */
  readonly responseFormat?: ResponseSchema;
  /** Used when the state has no system prompt of its own. */
  readonly systemPrompt?: string;
  /** Limits per execution. Default: `ExecutionBudget.default()` (20 steps); opt out with `unlimited()`. */
  readonly budget?: ExecutionBudget;
  /**
   * A budget shared by runs, processes and subagents (InMemoryBudgetLedger, RedisBudgetLedger):
   * each run charges the scopes it is given (`execute(state, { ledgerScopes })`), reserving every
   * model call's worst case first. Subagents charge their caller's scopes.
   */
  readonly ledger?: BudgetLedger;
  readonly hooks?: readonly Hook[];
  /** Model finish reasons that end the run with FinishReasonReceived (e.g. `['length']`). */
  readonly finishReasons?: readonly string[];
  readonly errorPolicy?: ErrorPolicyOptions;
  /** Tool calls of one step run at most this many at a time. Default 8. */
  readonly toolConcurrency?: number;
  /** Default timeout of a tool call in ms. */
  readonly toolTimeoutMs?: number;
  /**
   * Where runs with a `sessionId` checkpoint their state, after every recorded step and at the
   * end; `agent.resume(sessionId)` continues from the last checkpoint.
   */
  readonly store?: SessionStore;
  /**
   * Subagents this agent may call, each seen by the model as a tool named by its key with input
   * `{ task, context? }`. `maxDepth` (default 3) counts the root as depth 0; the root's governs the tree.
   */
  readonly subagents?: SubagentsConfig<SubagentDefinition>;
  /**
   * OpenTelemetry spans (`invoke_agent`, `chat`, `execute_tool`) for every run of this agent and
   * its subagents, sent to `tracer`; needs the optional peer `@opentelemetry/api`. Read from the
   * root definition only.
   */
  readonly telemetry?: TelemetryOptions;
  /**
   * MCP servers whose tools the model is offered as `<server>_<tool>`: `{ command, args, env, cwd }`
   * (stdio) or `{ url }` (Streamable HTTP); needs the optional peer `@modelcontextprotocol/sdk`.
   * Started at first use, shared by the agent's executions, restarted after they die, closed by
   * `agent.close()`. A subagent without tools or servers of its own uses its caller's.
   */
  readonly mcpServers?: McpServersConfig;
  /**
   * Binds approvals to the exact call: each pending approval of a run of this agent (its subagents'
   * included) carries a `signature`, an HMAC-SHA256 over the session id, the path, the call id and
   * its exact input; `decide` refuses a decision without the matching signature
   * (APPROVAL_SIGNATURE_INVALID). Read from the root definition only.
   */
  readonly approvalSecret?: string;
  /**
   * The version of this agent's code (a name of your choosing, e.g. '2'). Every save records it:
   * `state.agentVersion()`. Read from the root definition only.
   */
  readonly version?: string;
  /**
   * How sessions saved by older versions become this version's, in order (`from` each version):
   * tools and subagents renamed in the whole tree of a waiting session, and a state change of your
   * own. Applied when a run loads such a session (execute with a sessionId, resume, decide, chat,
   * worker jobs, chat handlers). Needs `version`. Read from the root definition only.
   * See docs/upgrading.md.
   */
  readonly migrations?: readonly AgentMigration[];
}

/**
 * A subagent: an agent definition with a description for the model. `model`/`driver` and `tools`
 * default to the caller's, `subagents` to the caller's subagents; its budget is capped by what the
 * caller has left.
 */
export interface SubagentDefinition extends AgentDefinition {
  readonly description: string;
}

/** A definition the runtime cannot run; the message names the field. */
export class InvalidDefinitionError extends AgentMachineError {
  static override get name(): string {
    return 'InvalidDefinitionError';
  }

  constructor(
    readonly field: string,
    detail: string,
  ) {
    super('INVALID_DEFINITION', `Invalid agent definition: ${field} ${detail}`);
  }
}

export function checkDefinition(
  definition: AgentDefinition,
  path = '',
  inherited = false,
  seen: Set<AgentDefinition> = new Set(),
): void {
  const at = (field: string) => `${path}${field}`;
  if (typeof definition !== 'object' || definition === null) {
    throw new InvalidDefinitionError(path || '(root)', 'must be an object');
  }
  const versioning = path === '' ? versionProblem(definition) : null;
  if (versioning) throw new InvalidDefinitionError(versioning.field, versioning.detail);
  if (!definition.model && !definition.driver && !inherited) {
    throw new InvalidDefinitionError(
      at('model'),
      'is missing: give a model (an AI SDK LanguageModel) or a driver',
    );
  }
  if (definition.model && typeof definition.model.doGenerate !== 'function') {
    throw new InvalidDefinitionError(at('model'), 'is not an AI SDK LanguageModel (no doGenerate function)');
  }
  const version = (definition.model as { specificationVersion?: unknown } | undefined)?.specificationVersion;
  if (definition.model && version !== 'v3' && version !== 'v4') {
    throw new InvalidDefinitionError(
      at('model'),
      `has specificationVersion ${JSON.stringify(version) ?? 'undefined'}: pass an AI SDK 6 (LanguageModelV3) or AI SDK 7 (LanguageModelV4) language model`,
    );
  }
  if (definition.context !== undefined && !definition.model) {
    throw new InvalidDefinitionError(
      at('context'),
      'needs a model: context policies are applied by the model driver (give a model, or modelDriver(model, { context }) as the driver)',
    );
  }
  if (definition.fallbackModels !== undefined) {
    if (!Array.isArray(definition.fallbackModels) || !definition.model) {
      throw new InvalidDefinitionError(at('fallbackModels'), 'must be an array of models beside `model`');
    }
    definition.fallbackModels.forEach((fallback, i) => {
      if (typeof fallback?.doGenerate !== 'function') {
        throw new InvalidDefinitionError(
          at(`fallbackModels[${i}]`),
          'is not an AI SDK LanguageModel (no doGenerate function)',
        );
      }
    });
  }
  if (definition.telemetry !== undefined && typeof definition.telemetry?.tracer?.startSpan !== 'function') {
    throw new InvalidDefinitionError(
      at('telemetry.tracer'),
      "must be an OpenTelemetry Tracer (trace.getTracer('my-app') of @opentelemetry/api)",
    );
  }
  if (definition.driver && typeof definition.driver.infer !== 'function') {
    throw new InvalidDefinitionError(at('driver'), 'has no infer(state, context) function');
  }
  if (definition.budget !== undefined && !(definition.budget instanceof ExecutionBudget)) {
    throw new InvalidDefinitionError(
      at('budget'),
      'must be an ExecutionBudget (new ExecutionBudget({ maxSteps: 10 }))',
    );
  }
  if (definition.ledger !== undefined && typeof definition.ledger?.reserve !== 'function') {
    throw new InvalidDefinitionError(
      at('ledger'),
      'must be a BudgetLedger (new InMemoryBudgetLedger(), new RedisBudgetLedger({ connection }))',
    );
  }
  for (const [name, tool] of Object.entries(definition.tools ?? {})) {
    if (!tool || typeof tool !== 'object' || !tool.inputSchema) {
      throw new InvalidDefinitionError(
        at(`tools.${name}`),
        'needs an inputSchema (a zod schema or the AI SDK jsonSchema())',
      );
    }
  }
  const positive = (field: string, value: number | undefined) => {
    if (value !== undefined && (!Number.isFinite(value) || value <= 0)) {
      throw new InvalidDefinitionError(at(field), `must be a positive number, got ${value}`);
    }
  };
  const store = definition.store as Partial<SessionStore> | undefined;
  if (store !== undefined && (typeof store?.load !== 'function' || typeof store?.save !== 'function')) {
    throw new InvalidDefinitionError(
      at('store'),
      'must be a SessionStore (load and save), e.g. new SqliteSessionStore(file)',
    );
  }
  const secret: unknown = definition.approvalSecret;
  if (secret !== undefined && (typeof secret !== 'string' || secret.length === 0)) {
    throw new InvalidDefinitionError(at('approvalSecret'), 'must be a non-empty string (a key kept secret)');
  }
  for (const [name, server] of Object.entries(definition.mcpServers ?? {})) {
    if (!MCP_SERVER_NAME.test(name))
      throw new InvalidDefinitionError(
        at(`mcpServers.${name}`),
        'must be named with letters, digits, _ and - only',
      );
    const problem = mcpConfigProblem(server);
    if (problem) throw new InvalidDefinitionError(at(`mcpServers.${name}`), problem);
  }
  positive('toolConcurrency', definition.toolConcurrency);
  positive('toolTimeoutMs', definition.toolTimeoutMs);
  positive('errorPolicy.maxConsecutiveErrorSteps', definition.errorPolicy?.maxConsecutiveErrorSteps);
  const subagents = definition.subagents;
  // A definition may list itself (recursion, bounded by maxDepth at run time): check each once.
  if (subagents === undefined || seen.has(definition)) return;
  seen.add(definition);
  const maxDepth = subagents.maxDepth;
  if (maxDepth !== undefined && (!Number.isInteger(maxDepth) || maxDepth < 0)) {
    throw new InvalidDefinitionError(
      at('subagents.maxDepth'),
      `must be a whole number >= 0, got ${maxDepth}`,
    );
  }
  for (const [name, child] of Object.entries(subagents.agents ?? {})) {
    const childPath = at(`subagents.agents.${name}.`);
    if (Object.hasOwn(definition.tools ?? {}, name)) {
      throw new InvalidDefinitionError(
        at(`subagents.agents.${name}`),
        `has the name of a tool: rename one of them`,
      );
    }
    if (typeof child?.description !== 'string' || child.description.trim() === '') {
      throw new InvalidDefinitionError(
        `${childPath}description`,
        'is missing: the model chooses subagents by it',
      );
    }
    checkDefinition(child, childPath, true, seen);
  }
}
