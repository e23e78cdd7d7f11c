import { createActor } from 'xstate';
import { z } from 'zod';
import type { LoopSession } from '../../machines/agentLoop';
import type { Driver } from '../drivers/driver';
import { modelDriver } from '../drivers/model-driver';
import type { ResponseSchema } from '../hooks/structured-output-guard';
import type { BudgetLedger } from '../ledger/budget-ledger';
import { McpServers } from '../mcp/mcp-servers';
import { NoSessionStoreError, SessionConflictError, SessionNotFoundError } from '../persistence/errors';
import { replayRun } from '../replay/agent-replay';
import { verifyUpgrade } from '../replay/verify-upgrade';
import type { ResponseFormat } from '../state/agent-context';
import { AgentState } from '../state/agent-state';
import { ApprovalError } from '../state/approval-error';
import { InvalidArgumentError, shownValue } from '../state/errors';
import type { RunListener } from '../state/event-source';
import { ExecutionBudget } from '../state/execution-budget';
import { ExecutionStatus } from '../state/execution-status';
import { type PendingApproval, pendingMatches } from '../state/pending-approval';
import { DEFAULT_MAX_DEPTH } from '../subagents/subagent-definition';
import { AgentTracing } from '../telemetry/agent-tracing';
import type { TracedModel } from '../telemetry/model-attributes';
import { AgentStream } from '../ui/agent-stream';
import type { Agent } from './agent-actor';
import { type AgentDefinition, checkDefinition } from './agent-definition';
import { upgradeState } from './agent-migrations';
import { withSignedApprovals } from './approval-signature';
import { takeDecisions } from './approvals';
import { ChatTurnConflictError } from './chat-turn-conflict-error';
import { IdleActors } from './idle-actors';
import { provideLoop } from './loop-actors';
import { quietMachine } from './quiet-machine';
import { hasReconcilable, reconcileInterrupted } from './reconcile-interrupted';
import { type InternalActorOptions, listened, runToOutcome } from './run-to-outcome';
import { type Scope, subagentCalls } from './subagent-calls';

export type { ReplayOptions, ReplayResult } from '../replay/agent-replay';
export { MissingRecordedResultError } from '../replay/agent-replay';
export type {
  SessionUpgradeReport,
  UpgradeReport,
  UpgradeSource,
  UpgradeVerdict,
  VerifyUpgradeOptions,
} from '../replay/verify-upgrade';
export type { Agent, AgentActor, CreateActorOptions, ExecuteOptions } from './agent-actor';
export type { AgentMigration } from './agent-migrations';
export { AgentMigrationError } from './agent-migrations';
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
  // a subagent without a pricing table of its own prices its model's calls by its caller's
  const pricing = definition.modelOptions?.pricing ?? scope.pricing;
  const driver: Driver =
    definition.driver ??
    (definition.model
      ? modelDriver(definition.model, {
          ...definition.modelOptions,
          ...(pricing && { pricing }),
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
  const subagents = subagentCalls(
    definition,
    scope,
    { driver, tools, tracing, models, mcp, pricing },
    buildAgent,
  );
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
  // The one place a run takes its state: a session saved by an older version is migrated here.
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

  // Quiet runs reuse their actors; not an agent with subagents: a stopped run's child may still
  // answer its caller after the outcome, and must not reach the caller's next run.
  const quietActor = (state: AgentState) => agent.createActor(state, QUIET);
  const idle =
    [...subagents.names()].length === 0 && !tracing ? new IdleActors(quietActor, prepare) : undefined;

  /**
   * `state` with the calls a crash interrupted settled by their tools' reconcile where they can
   * tell (reconcile-interrupted.ts); `skip`: calls a person's decisions name, left to them.
   */
  const settle = async (
    state: AgentState,
    sessionId: string | null,
    options: { readonly signal?: AbortSignal; readonly onEvent?: RunListener },
    skip?: (pending: PendingApproval) => boolean,
  ): Promise<AgentState> => {
    // an interrupted call of an MCP server's tool: the servers are asked for their tools first
    const waits =
      mcp && state.pendingApprovals().some((p) => p.reason === 'interrupted' && !p.callPath?.length);
    const rootTools = waits ? await mcp.callableToolSet(tools, options.signal) : tools;
    const toolsAt = (path: readonly string[]) => (path.length === 0 ? rootTools : agent.toolsAt(path));
    return hasReconcilable(state, toolsAt)
      ? reconcileInterrupted(state, {
          toolsAt,
          sessionId,
          timeoutMs: definition.toolTimeoutMs,
          hooks: definition.hooks ?? [],
          signal: options.signal,
          onEvent: options.onEvent,
          onReconciled: tracing && ((event) => tracing.reconciled(event)),
          skip,
        })
      : state;
  };

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
      const { sessionId, ...runOptions } = options;
      if (sessionId === undefined) return start(state, runOptions);
      if (!store) throw new NoSessionStoreError('execute(state, { sessionId })');
      const stored = await store.load(sessionId);
      // The started execution is saved first, so a crash in the first step can be resumed.
      const started = prepare(state).withExecutionStarted();
      const version = await store.save(sessionId, started, stored?.version ?? null);
      return start(started, runOptions, { id: sessionId, version });
    },
    replay: (recorded, options) => replayRun(definition, createAgent, recorded, options),
    verifyUpgrade: (from, options) => verifyUpgrade(agent, from, options),
    async load(sessionId) {
      if (!store) throw new NoSessionStoreError('load(sessionId)');
      const stored = await store.load(sessionId);
      return stored && { state: upgrade(stored.state), version: stored.version };
    },
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
      await tracing?.ready;
      let stored: { state: AgentState; version: number } | null = null;
      if (typeof target === 'string') {
        if (!store) throw new NoSessionStoreError('decide(sessionId, ...)');
        stored = await store.load(target);
        if (!stored) throw new SessionNotFoundError(target);
      }
      // interrupted calls these decisions do not name are put to their tools' reconcile first
      const named = (pending: PendingApproval) =>
        decisions.some((d) => pendingMatches([pending], d?.toolCallId, d).length > 0);
      const loaded = upgrade(stored?.state ?? (target as AgentState));
      const sessionId = typeof target === 'string' ? target : null;
      const settled = await settle(loaded, sessionId, options, named);
      const state = await takeDecisions(settled, decisions, {
        secret: approvalSecret,
        sessionId: typeof target === 'string' ? target : null,
        toolsAt: agent.toolsAt,
      });
      // The decided state is saved first, as `execute` saves the started execution: of two decides
      // racing on one waiting session, the second's save is refused (SessionConflictError, thrown)
      // before anything of its run starts.
      const session =
        typeof target === 'string' && store && stored
          ? { id: target, version: await store.save(target, state, stored.version) }
          : undefined;
      return start(state, options, session);
    },
    async chat(sessionId, text, options = {}) {
      if (!store) throw new NoSessionStoreError('chat(sessionId, text)');
      const stored = await store.load(sessionId);
      let state = stored?.state ?? AgentState.empty();
      // a crash's interrupted calls that their tools' reconcile settles: the run goes on first
      if (stored && state.approval() && (mcp !== undefined || hasReconcilable(state, agent.toolsAt))) {
        const settled = await settle(state, sessionId, options);
        if (settled.pendingApprovals().length === 0) {
          const { signal, onEvent, ...actorOptions } = options;
          const session = { id: sessionId, version: stored.version };
          state = await runToOutcome(
            agent.createActor(settled, listened(actorOptions, onEvent, session)),
            signal,
            onEvent,
          );
        }
      }
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
      const session = { id: sessionId, version: stored.version };
      // calls a crash interrupted were saved unsigned: signed now, as they would have been when asked
      const upgraded = upgrade(stored.state);
      const state =
        approvalSecret && upgraded.approval()
          ? withSignedApprovals(upgraded, approvalSecret, sessionId)
          : upgraded;
      return start(await settle(state, sessionId, options), options, session);
    },
  };
  /**
   * Runs `state` on a new actor to its outcome, in `session` when given: how `execute`, `decide`
   * and `resume` start a run (an idle actor aside).
   */
  const start = (state: AgentState, options: RunStartOptions, session?: LoopSession) => {
    const { signal, onEvent, ...actorOptions } = options;
    return runToOutcome(agent.createActor(state, listened(actorOptions, onEvent, session)), signal, onEvent);
  };
  return agent;
}

/** What a run's start reads of a call's options; the rest are the actor's. */
interface RunStartOptions {
  readonly signal?: AbortSignal;
  readonly onEvent?: RunListener;
  readonly inspect?: unknown;
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
