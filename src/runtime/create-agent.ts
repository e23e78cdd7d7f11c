import { createActor } from 'xstate';
import type { IntentSave, LoopInput, LoopSession } from '../../machines/agentLoop';
import type { BudgetLedger } from '../ledger/budget-ledger';
import { NoSessionStoreError } from '../persistence/errors';
import type { LoadedSession } from '../persistence/session-store';
import { replayRun } from '../replay/agent-replay';
import { verifyUpgrade } from '../replay/verify-upgrade';
import type { AgentState } from '../state/agent-state';
import { InvalidArgumentError, shownValue } from '../state/errors';
import type { RunListener } from '../state/event-source';
import { ExecutionBudget } from '../state/execution-budget';
import { DEFAULT_MAX_DEPTH } from '../subagents/subagent-definition';
import { AgentTracing } from '../telemetry/agent-tracing';
import type { ToolSet } from '../tools/define-tool';
import { AgentStream } from '../ui/agent-stream';
import type { Agent, ExecuteOptions, RunInputOptions } from './agent-actor';
import { type AgentDefinition, checkDefinition } from './agent-definition';
import { type AgentParts, agentParts } from './agent-parts';
import { type AgentRuns, chatTurn, decideRun, executeRun, resumeRun } from './agent-runs';
import { IdleActors } from './idle-actors';
import { provideLoop } from './loop-actors';
import { listenedMachine, quietMachine } from './quiet-machine';
import type { InternalActorOptions } from './run-to-outcome';
import { type Scope, type SubagentCalls, subagentCalls } from './subagent-calls';

export type { ReplayOptions, ReplayResult } from '../replay/agent-replay';
export { MissingRecordedResultError } from '../replay/agent-replay';
export type {
  SessionUpgradeReport,
  UpgradeReport,
  UpgradeSource,
  UpgradeVerdict,
  VerifyUpgradeOptions,
} from '../replay/verify-upgrade';
export type { Agent, AgentActor, CreateActorOptions, ExecuteOptions, RunInputOptions } from './agent-actor';
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
  const parts = agentParts(definition, scope);
  const { driver, tools, tracing, models, mcp, pricing, store, ledger } = parts;
  const subagents = subagentCalls(
    definition,
    scope,
    { driver, tools, tracing, models, mcp, pricing },
    buildAgent,
  );
  const { machine, hookStages, checkStep } = provideLoop(definition, {
    driver: parts.inference,
    tools,
    store,
    subagents,
    mcp,
    approvalSecret: parts.approvalSecret,
    ledger,
  });
  const inputFor = loopInputs(parts, hookStages, checkStep);
  // Quiet runs reuse their actors; not an agent with subagents: a stopped run's child may still
  // answer its caller after the outcome, and must not reach the caller's next run.
  const idleActor = (state: AgentState, reports: boolean) =>
    agent.createActor(state, reports ? HEARD : QUIET);
  const idle =
    [...subagents.names()].length === 0 && !tracing ? new IdleActors(idleActor, parts.prepare) : undefined;
  const agent: Agent = {
    async close() {
      idle?.clear();
      await Promise.all([parts.ownMcp?.close(), ...[...subagents.children()].map((child) => child.close())]);
    },
    definition,
    budget: parts.budget,
    machine,
    depth: scope.depth,
    toolsAt: (path) => toolsAt(tools, subagents, path),
    inputFor,
    createActor: actorMaker(parts, machine, inputFor, definition.name ?? 'agent'),
    execute: (state, options) => executeRun(runs, state, options),
    replay: (recorded, options) => replayRun(definition, createAgent, recorded, options),
    verifyUpgrade: (from, options) => verifyUpgrade(agent, from, options),
    load: (sessionId) => loadSession(parts, sessionId),
    stream: (state, options) => streamRun(agent, state, options),
    decide: (target, decisions, options) => decideRun(runs, target, decisions, options),
    chat: (sessionId, text, options) => chatTurn(runs, sessionId, text, options),
    resume: (sessionId, options) => resumeRun(runs, sessionId, options),
  };
  const runs: AgentRuns = { agent, definition, parts, idle };
  return agent;
}

/** The tools of an agent (`[]`), or of the subagent at `path` below it. */
function toolsAt(tools: ToolSet, subagents: SubagentCalls, path: readonly string[]): ToolSet {
  const [name, ...rest] = path;
  if (name === undefined) return tools;
  // a path through no subagent of this agent (a state from elsewhere) leads to no tools
  return subagents.has(name) ? subagents.childAgent(name).toolsAt(rest) : {};
}

/** `agent.inputFor`: the machine input for a run (its options as an object, or the deprecated arguments). */
function loopInputs(
  parts: AgentParts,
  hookStages: LoopInput['hookStages'],
  checkStep: LoopInput['checkStep'],
): Agent['inputFor'] {
  return (state: AgentState, ...rest: unknown[]): LoopInput => {
    const options = runInputOptions(rest);
    const reports = options.reports ?? true;
    return {
      state: parts.prepare(state),
      hookStages,
      checkStep,
      budget: options.budget ?? parts.budget,
      session: options.session ?? null,
      reports,
      observed: options.observed ?? reports,
      intentSave: options.intentSave ?? null,
      ledgerScopes: options.ledgerScopes ?? [],
    };
  };
}

/** `inputFor(state, options)`, or its deprecated arguments `(state, budget, session, reports, intentSave, observed, ledgerScopes)`. */
function runInputOptions(rest: readonly unknown[]): RunInputOptions {
  const [first] = rest;
  // a budget of another copy of the library is a budget too
  const positional =
    rest.length > 1 ||
    first instanceof ExecutionBudget ||
    typeof (first as { remaining?: unknown } | undefined)?.remaining === 'function';
  if (!positional) return (first as RunInputOptions | undefined) ?? {};
  const [budget, session, reports, intentSave, observed, ledgerScopes] = rest as [
    ExecutionBudget?,
    LoopSession?,
    boolean?,
    IntentSave?,
    boolean?,
    (readonly string[])?,
  ];
  return { budget, session, reports, intentSave, observed, ledgerScopes };
}

/** `agent.createActor`: the agent's actor (not started) for a run of `state`. */
function actorMaker(
  parts: AgentParts,
  machine: Agent['machine'],
  inputFor: Agent['inputFor'],
  agentName: string,
): Agent['createActor'] {
  // made at the first run no one listens to
  let quiet: typeof machine | undefined;
  let heard: typeof machine | undefined;
  const { store, ledger, tracing } = parts;
  return (state, options = {}) => {
    const { budget, session, reports, observed, ledgerScopes, runHandle, ...actorOptions } =
      options as InternalActorOptions;
    if (session && !store) throw new NoSessionStoreError('A session');
    checkLedgerScopes(ledgerScopes, ledger);
    // Spans are made from the run's events and states: a traced run reports them, and is
    // observed, even with no one listening. An actor its caller holds is observed.
    const input = inputFor(state, {
      budget,
      session,
      reports: (reports ?? true) || !!tracing,
      observed: (observed ?? reports ?? true) || !!tracing,
      ledgerScopes,
    });
    if (!input.reports) quiet ??= quietMachine(machine);
    else if (!input.observed) heard ??= listenedMachine(machine);
    const actor = createActor(
      !input.reports ? (quiet as typeof machine) : input.observed ? machine : (heard as typeof machine),
      {
        input,
        ...actorOptions,
      },
    );
    tracing?.follow(actor, { name: agentName });
    runHandle?.attach(actor);
    return actor;
  };
}

/** `agent.stream`: a run of `state` as a stream of its events. */
function streamRun(agent: Agent, state: AgentState, options: ExecuteOptions = {}): AgentStream {
  return new AgentStream((listen) => {
    const { onEvent } = options;
    const both: RunListener = onEvent
      ? (event, source) => {
          listen(event, source);
          onEvent(event, source);
        }
      : listen;
    // Object.assign, not a spread and a new key: see `listened`
    return agent.execute(state, Object.assign({}, options, { onEvent: both }));
  });
}

/** `agent.load`: the stored session as this agent runs it (migrated; nothing saved). */
async function loadSession(parts: AgentParts, sessionId: string): Promise<LoadedSession | null> {
  if (!parts.store) throw new NoSessionStoreError('load(sessionId)');
  const stored = await parts.store.load(sessionId);
  return stored && { state: parts.upgrade(stored.state), version: stored.version };
}

/** The options of a run no one can listen to. */
const QUIET: InternalActorOptions = { reports: false };

/** The options of a run only its `onEvent` listens to (no inspector: nobody sees its states). */
const HEARD: InternalActorOptions = { reports: true, observed: false };

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
