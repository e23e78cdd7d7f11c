/** What an agent is to its users: the agent object, its actor, and the options of a run. */
import type { Actor, ActorOptions, AnyActorRef } from 'xstate';
import type { agentLoop, IntentSave, LoopInput, LoopSession } from '../../machines/agentLoop';
import type { LoadedSession } from '../persistence/session-store';
import type { Recording } from '../replay/replay-driver';
import type { ReplayOptions, ReplayResult } from '../replay/replay-options';
import type { UpgradeReport, UpgradeSource, VerifyUpgradeOptions } from '../replay/upgrade-report';
import type { AgentState } from '../state/agent-state';
import type { RunListener } from '../state/event-source';
import type { ExecutionBudget } from '../state/execution-budget';
import type { ToolSet } from '../tools/define-tool';
import type { AgentStream } from '../ui/agent-stream';
import type { AgentDefinition } from './agent-definition';
import type { ApprovalInput } from './approvals';

export type AgentActor = Actor<typeof agentLoop>;

export interface CreateActorOptions {
  /** An inspection observer: `@statelyai/inspect`'s `inspector.inspect`, or a function. */
  readonly inspect?: ActorOptions<typeof agentLoop>['inspect'];
  readonly id?: string;
  readonly systemId?: string;
  /** Run on this budget instead of the definition's. */
  readonly budget?: ExecutionBudget;
  /** An actor of yours to be this agent's parent: it joins that actor's system and inspector tree. */
  readonly parent?: AnyActorRef;
  /** Checkpoint to the agent's store under this session, whose stored version is `version`. */
  readonly session?: LoopSession;
  /** XState's clock for delayed transitions (the approval timeout); `SimulatedClock` in tests. */
  readonly clock?: ActorOptions<typeof agentLoop>['clock'];
  /**
   * The scopes of the agent's budget ledger this run charges (`'tenant:acme'`, `'user:42'`): every
   * model call reserves its worst case on all of them first, and the run stops with
   * `token_limit_reached` when one cannot cover it. Needs `createAgent({ ledger })`.
   */
  readonly ledgerScopes?: readonly string[];
}

export interface ExecuteOptions extends Omit<CreateActorOptions, 'session'> {
  /** Aborting ends the run promptly: Stopped with UserRequested, completed steps kept. */
  readonly signal?: AbortSignal;
  /**
   * Checkpoint the run to the agent's store under this id: at the start, after every recorded
   * step and at the end. An existing session is continued from its stored version.
   */
  readonly sessionId?: string;
  /**
   * Receives every event of the run, the agent's and its subagents' (steps, tool calls, text
   * deltas, approvals, ...), with its source: the step it belongs to and the subagent call it
   * comes from (null for the agent's own events).
   */
  readonly onEvent?: RunListener;
}

/** The options of a run's machine input (`agent.inputFor`). */
export interface RunInputOptions {
  /** Run on this budget instead of the definition's. */
  readonly budget?: ExecutionBudget;
  readonly session?: LoopSession;
  /** False when no one can listen to the run (default true). */
  readonly reports?: boolean;
  /** A subagent's: how its caller saves the intent of its steps (`LoopContext.intentSave`). */
  readonly intentSave?: IntentSave;
  /** Something can see the run's states (`LoopContext.observed`); default: `reports`. */
  readonly observed?: boolean;
  /** The budget ledger scopes the run charges (`CreateActorOptions.ledgerScopes`). */
  readonly ledgerScopes?: readonly string[];
}

export interface Agent {
  readonly definition: AgentDefinition;
  readonly budget: ExecutionBudget;
  /** The loop machine with this agent's actors provided. */
  readonly machine: typeof agentLoop;
  /** Depth in a tree of agents: 0 for an agent made by `createAgent`. */
  readonly depth: number;
  /** The tools of this agent (`[]`), or of the subagent at `path` below it (names, as `PendingApproval.path`). */
  toolsAt(path: readonly string[]): ToolSet;
  /** Runs one execution of `state` and resolves with the final state. */
  execute(state: AgentState, options?: ExecuteOptions): Promise<AgentState>;
  /**
   * Runs one execution of `state` like `execute`, as a stream: its events as they happen, the final
   * state as `stream.state`, and the AI SDK's UI message stream (`toUIMessageStreamResponse()`).
   */
  stream(state: AgentState, options?: ExecuteOptions): AgentStream;
  /**
   * One turn of a stored conversation: loads the session (or starts it), adds the user's message
   * and runs the next execution, checkpointing under `sessionId`. A session waiting for approval
   * refuses the message (ApprovalError, APPROVAL_PENDING): decide first.
   */
  chat(sessionId: string, text: string, options?: Omit<ExecuteOptions, 'sessionId'>): Promise<AgentState>;
  /**
   * Continues a session's execution from its last checkpoint (completed steps and their tool
   * calls are not repeated; only the step in flight at a crash runs again). A session whose
   * execution already ended is returned as it is.
   */
  resume(sessionId: string, options?: Omit<ExecuteOptions, 'sessionId'>): Promise<AgentState>;
  /**
   * Delivers a person's decisions on tool calls awaiting approval (`state.pendingApprovals()`) and
   * continues the run: approved calls execute, edited ones with the new (validated) input,
   * rejected ones are recorded as blocked with the reason, which the model is told. `target` is
   * the state `execute` returned, or a session id whose checkpoint awaits approval. A call inside
   * a waiting subagent (listed with its `path`) is routed down to its child, which resumes where
   * it waited. Raises ApprovalError for an id that is not pending, an edit the tool's schema
   * refuses, or (with `approvalSecret`) a missing or wrong signature; nothing runs twice. Resolves
   * like `execute`: at the outcome, or waiting again if calls are left undecided.
   */
  decide(
    target: AgentState | string,
    decisions: readonly ApprovalInput[],
    options?: Omit<ExecuteOptions, 'sessionId'>,
  ): Promise<AgentState>;
  /**
   * The machine input for a run of `state` (its budget: the definition's unless given; `reports`
   * false when no one can listen to the run, default true).
   */
  inputFor(state: AgentState, options?: RunInputOptions): LoopInput;
  /** @deprecated Pass the options as an object: `inputFor(state, { budget, session, reports })`. */
  inputFor(
    state: AgentState,
    budget?: ExecutionBudget,
    session?: LoopSession,
    reports?: boolean,
    intentSave?: IntentSave,
    observed?: boolean,
    ledgerScopes?: readonly string[],
  ): LoopInput;
  /** The XState actor (not started): starts in `pending`; send `execute`, `user.message`, `stop`. */
  createActor(state: AgentState, options?: CreateActorOptions): AgentActor;
  /**
   * Runs a recorded execution (a saved AgentState, or a trace) again with this agent's chart,
   * hooks and tools, the model answering from the recording, and resolves with the replayed state
   * and the first divergence from the recording (null when none). See ReplayOptions.
   */
  replay(recorded: Recording, options?: ReplayOptions): Promise<ReplayResult>;
  /**
   * Whether this version of the agent can go on with each session of `store` (a check before a
   * deploy): each is loaded, migrated (`migrations`), checked for calls it cannot carry on, and
   * replayed with its recorded tools. `ok` is false when any session is orphaned. See
   * docs/upgrading.md.
   */
  /**
   * The stored session as this agent runs it: loaded from its store and migrated from the version
   * that saved it (its pending approvals as they will be decided: new names, the same ids and
   * signatures). Nothing is saved; null when there is no such session.
   */
  load(sessionId: string): Promise<LoadedSession | null>;
  verifyUpgrade(store: UpgradeSource, options?: VerifyUpgradeOptions): Promise<UpgradeReport>;
  /** Closes what the agent holds open: its MCP servers (and its subagents'). */
  close(): Promise<void>;
}
