/**
 * The runs an agent starts: `execute`, `decide`, `resume` and a chat turn take their state (a
 * session's, saved first where the run continues one) and start it one way, `startRun`.
 */
import type { LoopSession } from '../../machines/agentLoop';
import { startChatTurn } from '../chat/chat-turn';
import { NoSessionStoreError, SessionConflictError, SessionNotFoundError } from '../persistence/errors';
import { AgentState } from '../state/agent-state';
import { ApprovalError } from '../state/approval-error';
import { InvalidArgumentError } from '../state/errors';
import type { RunListener } from '../state/event-source';
import { ExecutionStatus } from '../state/execution-status';
import { type PendingApproval, pendingMatches } from '../state/pending-approval';
import type { Agent, ExecuteOptions } from './agent-actor';
import type { AgentDefinition } from './agent-definition';
import type { AgentParts } from './agent-parts';
import { withSignedApprovals } from './approval-signature';
import { type ApprovalInput, takeDecisions } from './approvals';
import { ChatTurnConflictError } from './chat-turn-conflict-error';
import type { IdleActors } from './idle-actors';
import { hasReconcilable, reconcileInterrupted } from './reconcile-interrupted';
import { type InternalExecuteOptions, listened, runToOutcome } from './run-to-outcome';

/** What an agent's runs need of it. */
export interface AgentRuns {
  readonly agent: Agent;
  readonly definition: AgentDefinition;
  readonly parts: AgentParts;
  /** The actors of quiet runs, kept between runs (an agent without subagents or telemetry). */
  readonly idle: IdleActors | undefined;
}

/** What a run's start reads of a call's options; the rest are the actor's. */
interface RunStartOptions {
  readonly signal?: AbortSignal;
  readonly onEvent?: RunListener;
  readonly inspect?: unknown;
}

type SessionOptions = Omit<ExecuteOptions, 'sessionId'>;

/** Runs `state` on a new actor of `agent` to its outcome, in `session` when given: how every run starts. */
function startRun(
  agent: Pick<Agent, 'createActor'>,
  state: AgentState,
  options: RunStartOptions,
  session?: LoopSession,
): Promise<AgentState> {
  const { signal, onEvent, ...actorOptions } = options;
  return runToOutcome(agent.createActor(state, listened(actorOptions, onEvent, session)), signal, onEvent);
}

export async function executeRun(runs: AgentRuns, state: AgentState, options: ExecuteOptions = {}) {
  if (typeof (state as Partial<AgentState> | null)?.approval !== 'function') throw notAState(state);
  if (state.approval()) throw ApprovalError.pending(state);
  const { agent, parts, idle } = runs;
  await parts.tracing?.ready;
  // an execution in progress (resumed from a save) starts where `pending` decides: a new actor
  if (idle && plainRun(options) && state.status() !== ExecutionStatus.InProgress)
    return idle.run(state, options.signal, options.onEvent);
  const { sessionId, storedVersion, ...runOptions } = options as InternalExecuteOptions;
  if (sessionId === undefined) return startRun(agent, state, runOptions);
  const { store } = parts;
  if (!store) throw new NoSessionStoreError('execute(state, { sessionId })');
  // a chat turn loaded the session already (its one load)
  const loaded =
    storedVersion !== undefined ? storedVersion : ((await store.load(sessionId))?.version ?? null);
  // The started execution is saved first, so a crash in the first step can be resumed.
  const started = parts.prepare(state).withExecutionStarted();
  const version = await store.save(sessionId, started, loaded);
  return startRun(agent, started, runOptions, { id: sessionId, version });
}

export async function decideRun(
  runs: AgentRuns,
  target: AgentState | string,
  decisions: readonly ApprovalInput[],
  options: SessionOptions = {},
): Promise<AgentState> {
  const { agent, parts } = runs;
  const { store } = parts;
  await parts.tracing?.ready;
  let stored: { state: AgentState; version: number } | null = null;
  if (typeof target === 'string') {
    if (!store) throw new NoSessionStoreError('decide(sessionId, ...)');
    stored = await store.load(target);
    if (!stored) throw new SessionNotFoundError(target);
  }
  // interrupted calls these decisions do not name are put to their tools' reconcile first
  const named = (pending: PendingApproval) =>
    decisions.some((d) => pendingMatches([pending], d?.toolCallId, d).length > 0);
  const loaded = parts.upgrade(stored?.state ?? (target as AgentState));
  const sessionId = typeof target === 'string' ? target : null;
  const settled = await settleInterrupted(runs, loaded, sessionId, options, named);
  const state = await takeDecisions(settled, decisions, {
    secret: parts.approvalSecret,
    sessionId,
    toolsAt: agent.toolsAt,
  });
  // The decided state is saved first, as `execute` saves the started execution: of two decides
  // racing on one waiting session, the second's save is refused (SessionConflictError, thrown)
  // before anything of its run starts.
  const session =
    typeof target === 'string' && store && stored
      ? { id: target, version: await store.save(target, state, stored.version) }
      : undefined;
  return startRun(agent, state, options, session);
}

export async function chatTurn(
  runs: AgentRuns,
  sessionId: string,
  text: string,
  options: SessionOptions = {},
): Promise<AgentState> {
  const { agent, parts } = runs;
  const { store } = parts;
  if (!store) throw new NoSessionStoreError('chat(sessionId, text)');
  // the turn's one load (unless a crash's calls are settled first: that run saves)
  const stored = await store.load(sessionId);
  let state = stored?.state ?? AgentState.empty();
  let storedVersion: number | null | undefined = stored?.version ?? null;
  // a crash's interrupted calls that their tools' reconcile settles: the run goes on first
  if (stored && state.approval() && (parts.mcp !== undefined || hasReconcilable(state, agent.toolsAt))) {
    const settled = await settleInterrupted(runs, state, sessionId, options);
    if (settled.pendingApprovals().length === 0) {
      state = await startRun(agent, settled, options, { id: sessionId, version: stored.version });
      storedVersion = undefined;
    }
  }
  // as every chat turn starts (the chat handlers', the worker's): steered messages first
  return startChatTurn(state, text, (turn) =>
    agent.execute(turn, Object.assign({}, options, { sessionId, storedVersion })),
  ).catch((error: unknown) => {
    // Thrown (not recorded) only by the save that starts the turn: another turn saved first.
    if (error instanceof SessionConflictError) throw new ChatTurnConflictError(sessionId, { cause: error });
    throw error;
  });
}

export async function resumeRun(
  runs: AgentRuns,
  sessionId: string,
  options: SessionOptions = {},
): Promise<AgentState> {
  const { agent, parts } = runs;
  const { store, approvalSecret } = parts;
  if (!store) throw new NoSessionStoreError('resume(sessionId)');
  await parts.tracing?.ready;
  const stored = await store.load(sessionId);
  if (!stored) throw new SessionNotFoundError(sessionId);
  const status = stored.state.status();
  if (status !== 'in_progress' && status !== 'pending') return stored.state;
  const session = { id: sessionId, version: stored.version };
  // calls a crash interrupted were saved unsigned: signed now, as they would have been when asked
  const upgraded = parts.upgrade(stored.state);
  const state =
    approvalSecret && upgraded.approval()
      ? withSignedApprovals(upgraded, approvalSecret, sessionId)
      : upgraded;
  return startRun(agent, await settleInterrupted(runs, state, sessionId, options), options, session);
}

/**
 * `state` with the calls a crash interrupted settled by their tools' reconcile where they can
 * tell (reconcile-interrupted.ts); `skip`: calls a person's decisions name, left to them.
 */
async function settleInterrupted(
  runs: AgentRuns,
  state: AgentState,
  sessionId: string | null,
  options: { readonly signal?: AbortSignal; readonly onEvent?: RunListener },
  skip?: (pending: PendingApproval) => boolean,
): Promise<AgentState> {
  const { agent, definition, parts } = runs;
  const { mcp, tools, tracing } = parts;
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
}

/** Whether `options` sets nothing but `signal` (a key whose value is undefined sets nothing). */
/** Options that name no session, budget or actor option: only `signal` and `onEvent`, if any. */
function plainRun(options: object): boolean {
  for (const key in options)
    if (key !== 'signal' && key !== 'onEvent' && (options as Record<string, unknown>)[key] !== undefined)
      return false;
  return true;
}

function notAState(value: unknown): InvalidArgumentError {
  const given =
    typeof value === 'string' ? `the string ${JSON.stringify(value.slice(0, 40))}` : String(value);
  return new InvalidArgumentError(
    'execute(state)',
    `got ${given}; pass an AgentState: agent.execute(AgentState.empty().withUserMessage('...'))`,
  );
}
