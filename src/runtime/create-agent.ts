import { createActor } from 'xstate';
import { z } from 'zod';
import type { Driver } from '../drivers/driver';
import { modelDriver } from '../drivers/model-driver';
import type { ResponseSchema } from '../hooks/structured-output-guard';
import type { BudgetLedger } from '../ledger/budget-ledger';
import { McpServers } from '../mcp/mcp-servers';
import { NoSessionStoreError, SessionConflictError, SessionNotFoundError } from '../persistence/errors';
import type { ResponseFormat } from '../state/agent-context';
import { AgentState } from '../state/agent-state';
import { ApprovalError } from '../state/approval-error';
import { InvalidArgumentError, shownValue } from '../state/errors';
import type { RunListener } from '../state/event-source';
import { ExecutionBudget } from '../state/execution-budget';
import { ExecutionStatus } from '../state/execution-status';
import { DEFAULT_MAX_DEPTH } from '../subagents/subagent-definition';
import { AgentTracing } from '../telemetry/agent-tracing';
import type { TracedModel } from '../telemetry/model-attributes';
import { AgentStream } from '../ui/agent-stream';
import type { Agent } from './agent-actor';
import { type AgentDefinition, checkDefinition } from './agent-definition';
import { replayRun } from './agent-replay';
import { withSignedApprovals } from './approval-signature';
import { takeDecisions } from './approvals';
import { ChatTurnConflictError } from './chat-turn-conflict-error';
import { IdleActors } from './idle-actors';
import { provideLoop } from './loop-actors';
import { quietMachine } from './quiet-machine';
import { type InternalActorOptions, listened, runToOutcome } from './run-to-outcome';
import { type Scope, subagentCalls } from './subagent-calls';

export type { Agent, AgentActor, CreateActorOptions, ExecuteOptions } from './agent-actor';
export type { ReplayOptions, ReplayResult } from './agent-replay';
export { MissingRecordedResultError } from './agent-replay';
export type { ApprovalInput } from './approvals';
export { AgentRuntimeError } from './run-to-outcome';

/**
 * Builds an agent from its definition: the loop machine with the driver, tool executor and hooks
 * provided as its actors.
 *
 * @example
 * const agent = createAgent({ model, tools: { add }, budget: new ExecutionBudget({ maxSteps: 10 }) });
 * const done = await agent.execute(AgentState.empty().withUserMessage('What is 2 + 3?'));
 * done.finalResponse(); // '5'
 */
export function createAgent(definition: AgentDefinition): Agent {
  checkDefinition(definition);
  return buildAgent(definition, {
    ledger: definition.ledger,
    depth: 0,
    maxDepth: definition.subagents?.maxDepth ?? DEFAULT_MAX_DEPTH,
    tracing: definition.telemetry && new AgentTracing(definition.telemetry),
  });
}

function buildAgent(definition: AgentDefinition, scope: Scope): Agent {
  const budget = definition.budget ?? ExecutionBudget.default();
  const store = definition.store;
  const driver: Driver =
    definition.driver ??
    (definition.model
      ? modelDriver(definition.model, {
          ...definition.modelOptions,
          ...contextOf(definition),
          fallbackModels: definition.fallbackModels ?? definition.modelOptions?.fallbackModels,
        })
      : (scope.driver as Driver));
  // Tools and MCP servers go together: a subagent with neither uses its caller's.
  const ownsTools = definition.tools !== undefined || definition.mcpServers !== undefined;
  const tools = (ownsTools ? definition.tools : scope.tools) ?? {};
  const ownMcp = definition.mcpServers && new McpServers(definition.mcpServers);
  const mcp = ownsTools ? ownMcp : scope.mcp;
  const { tracing } = scope;
  // a subagent charges its caller's ledger (and scopes: `spawnSubagent`)
  const ledger = scope.ledger ?? definition.ledger;
  const models = tracing && tracedModels(definition, scope);
  const inference = tracing ? tracing.traceDriver(driver, models ?? []) : driver;
  const agentName = definition.name ?? 'agent';
  const subagents = subagentCalls(definition, scope, { driver, tools, tracing, models, mcp }, buildAgent);
  const approvalSecret = scope.depth === 0 ? definition.approvalSecret : undefined;
  const { machine, hookStages, checkStep } = provideLoop(definition, {
    driver: inference,
    tools,
    store,
    subagents,
    mcp,
    approvalSecret,
    ledger,
  });

  // made at the first run no one listens to
  let quiet: typeof machine | undefined;
  const responseFormat = definition.responseFormat && jsonResponseFormat(definition.responseFormat);
  const prepare = (state: AgentState) => {
    let prepared = state;
    if (definition.systemPrompt && prepared.systemPrompt() === '') {
      prepared = prepared.withSystemPrompt(definition.systemPrompt);
    }
    if (responseFormat && prepared.responseFormat().type === 'text') {
      prepared = prepared.withResponseFormat(responseFormat);
    }
    return prepared;
  };

  // Quiet runs reuse their actors; not an agent with subagents: a stopped run's child may still
  // answer its caller after the outcome, and must not reach the caller's next run.
  const quietActor = (state: AgentState) => agent.createActor(state, QUIET);
  const idle =
    [...subagents.names()].length === 0 && !tracing ? new IdleActors(quietActor, prepare) : undefined;

  const agent: Agent = {
    async close() {
      idle?.clear();
      await Promise.all([ownMcp?.close(), ...[...subagents.children()].map((child) => child.close())]);
    },
    definition,
    budget,
    machine,
    depth: scope.depth,
    toolsAt: (path) => {
      const [name, ...rest] = path;
      if (name === undefined) return tools;
      // a path through no subagent of this agent (a state from elsewhere) leads to no tools
      return subagents.has(name) ? subagents.childAgent(name).toolsAt(rest) : {};
    },
    inputFor: (state, runBudget, session, reports, intentSave, observed, ledgerScopes) => ({
      state: prepare(state),
      hookStages,
      checkStep,
      budget: runBudget ?? budget,
      session: session ?? null,
      reports: reports ?? true,
      observed: observed ?? reports ?? true,
      intentSave: intentSave ?? null,
      ledgerScopes: ledgerScopes ?? [],
    }),
    createActor(state, options = {}) {
      const {
        budget: runBudget,
        session,
        reports,
        observed,
        ledgerScopes,
        ...actorOptions
      } = options as InternalActorOptions;
      if (session && !store) throw new NoSessionStoreError('A session');
      checkLedgerScopes(ledgerScopes, ledger);
      // Spans are made from the run's events and states: a traced run reports them, and is
      // observed, even with no one listening. An actor its caller holds is observed.
      const input = agent.inputFor(
        state,
        runBudget,
        session,
        (reports ?? true) || !!tracing,
        undefined,
        (observed ?? reports ?? true) || !!tracing,
        ledgerScopes,
      );
      if (!input.reports) quiet ??= quietMachine(machine);
      const actor = createActor(input.reports ? machine : (quiet as typeof machine), {
        input,
        ...actorOptions,
      });
      tracing?.follow(actor, { name: agentName });
      return actor;
    },
    async execute(state, options = {}) {
      if (typeof (state as Partial<AgentState> | null)?.approval !== 'function') throw notAState(state);
      if (state.approval()) throw ApprovalError.pending(state);
      await tracing?.ready;
      // an execution in progress (resumed from a save) starts where `pending` decides: a new actor
      if (idle && signalOnly(options) && state.status() !== ExecutionStatus.InProgress)
        return idle.run(state, options.signal);
      const { signal, sessionId, onEvent, ...actorOptions } = options;
      if (sessionId === undefined)
        return runToOutcome(agent.createActor(state, listened(actorOptions, onEvent)), signal, onEvent);
      if (!store) throw new NoSessionStoreError('execute(state, { sessionId })');
      const stored = await store.load(sessionId);
      // The started execution is saved first, so a crash in the first step can be resumed.
      const started = prepare(state).withExecutionStarted();
      const version = await store.save(sessionId, started, stored?.version ?? null);
      return runToOutcome(
        agent.createActor(started, listened(actorOptions, onEvent, { id: sessionId, version })),
        signal,
        onEvent,
      );
    },
    replay: (recorded, options) => replayRun(definition, createAgent, recorded, options),
    stream: (state, options = {}) =>
      new AgentStream((listen) => {
        const { onEvent } = options;
        const both: RunListener = onEvent
          ? (event, source) => {
              listen(event, source);
              onEvent(event, source);
            }
          : listen;
        // Object.assign, not a spread and a new key: see `listened`
        return agent.execute(state, Object.assign({}, options, { onEvent: both }));
      }),
    async decide(target, decisions, options = {}) {
      const { signal, onEvent, ...actorOptions } = options;
      await tracing?.ready;
      let stored: { state: AgentState; version: number } | null = null;
      if (typeof target === 'string') {
        if (!store) throw new NoSessionStoreError('decide(sessionId, ...)');
        stored = await store.load(target);
        if (!stored) throw new SessionNotFoundError(target);
      }
      const state = await takeDecisions(stored?.state ?? (target as AgentState), decisions, {
        secret: approvalSecret,
        sessionId: typeof target === 'string' ? target : null,
        toolsAt: agent.toolsAt,
      });
      const session =
        typeof target === 'string' ? { id: target, version: stored?.version ?? null } : undefined;
      return runToOutcome(
        agent.createActor(state, listened(actorOptions, onEvent, session)),
        signal,
        onEvent,
      );
    },
    async chat(sessionId, text, options = {}) {
      if (!store) throw new NoSessionStoreError('chat(sessionId, text)');
      const stored = await store.load(sessionId);
      const state = stored?.state ?? AgentState.empty();
      if (state.approval()) throw ApprovalError.pending(state);
      return agent
        .execute(state.withUserMessage(text), Object.assign({}, options, { sessionId }))
        .catch((error: unknown) => {
          // Thrown (not recorded) only by the save that starts the turn: another turn saved first.
          if (error instanceof SessionConflictError)
            throw new ChatTurnConflictError(sessionId, { cause: error });
          throw error;
        });
    },
    async resume(sessionId, options = {}) {
      if (!store) throw new NoSessionStoreError('resume(sessionId)');
      await tracing?.ready;
      const stored = await store.load(sessionId);
      if (!stored) throw new SessionNotFoundError(sessionId);
      const status = stored.state.status();
      if (status !== 'in_progress' && status !== 'pending') return stored.state;
      const { signal, onEvent, ...actorOptions } = options;
      const session = { id: sessionId, version: stored.version };
      // calls a crash interrupted were saved unsigned: signed now, as they would have been when asked
      const state =
        approvalSecret && stored.state.approval()
          ? withSignedApprovals(stored.state, approvalSecret, sessionId)
          : stored.state;
      return runToOutcome(
        agent.createActor(state, listened(actorOptions, onEvent, session)),
        signal,
        onEvent,
      );
    },
  };
  return agent;
}

/** The options of a run no one can listen to. */
const QUIET: InternalActorOptions = { reports: false };

/** Whether `options` sets nothing but `signal` (a key whose value is undefined sets nothing). */
function signalOnly(options: object): boolean {
  for (const key in options)
    if (key !== 'signal' && (options as Record<string, unknown>)[key] !== undefined) return false;
  return true;
}

/** A run's `ledgerScopes`: non-empty strings, for an agent with a ledger. */
function checkLedgerScopes(scopes: unknown, ledger: BudgetLedger | undefined): void {
  if (scopes === undefined) return;
  if (!Array.isArray(scopes) || scopes.some((scope) => typeof scope !== 'string' || scope.length === 0))
    throw new InvalidArgumentError(
      'ledgerScopes',
      `expected an array of non-empty strings ('tenant:acme', 'user:42'), got ${shownValue(scopes)}`,
    );
  if (!ledger && scopes.length > 0)
    throw new InvalidArgumentError(
      'ledgerScopes',
      'the agent has no budget ledger to charge them to: createAgent({ ledger: new InMemoryBudgetLedger() })',
    );
}

function notAState(value: unknown): InvalidArgumentError {
  const given =
    typeof value === 'string' ? `the string ${JSON.stringify(value.slice(0, 40))}` : String(value);
  return new InvalidArgumentError(
    'execute(state)',
    `got ${given}; pass an AgentState: agent.execute(AgentState.empty().withUserMessage('...'))`,
  );
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

const contextOf = (definition: AgentDefinition) =>
  definition.context !== undefined ? { context: definition.context } : {};

function jsonResponseFormat(schema: ResponseSchema): ResponseFormat {
  if (!(schema instanceof z.ZodType)) return { type: 'json' };
  return { type: 'json', schema: z.toJSONSchema(schema, { target: 'draft-7' }) as Record<string, unknown> };
}
