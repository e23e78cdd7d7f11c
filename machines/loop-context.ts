/** The agent machine's context, its input, the events it accepts, and what its workers are made with. */

import type { ActorRef, Snapshot, StateValue } from 'xstate';

import type { AgentError } from '../src/state/agent-error';
import type { AgentState } from '../src/state/agent-state';
import type { ApprovalDecision } from '../src/state/approval';
import type { ExecutionBudget } from '../src/state/execution-budget';
import type { ReportEvent } from '../src/state/loop-events';
import { Message } from '../src/state/message';
import type { ApprovalRoute } from '../src/state/pending-approval';
import type { HookStage, WorkerAnswer } from './worker-protocol';

export interface LoopContext {
  readonly state: AgentState;
  /** The error that sent the run to `failing`, for onError hooks. */
  readonly error: AgentError | null;
  /** The stages the agent has hooks for; the others are passed without invoking `hooks`. */
  readonly hookStages: readonly HookStage[];
  /** The budget this run is held to (a subagent's is capped by its parent's remainder). */
  readonly budget: ExecutionBudget;
  /** The session the run checkpoints to, with the version last saved; null without a store. */
  readonly session: LoopSession | null;
  /** False when no one can listen (a plain `execute()`): the actors then skip their reports. */
  readonly reports: boolean;
  /**
   * True when something can see the run's states (an inspector, a tracer, an actor its caller
   * holds): every state is taken. A run heard only through its events (`onEvent`) is not observed:
   * it skips the states where nothing happens, emitting the same events (#38).
   */
  readonly observed: boolean;
  /** The agent's built-in after-step checks, applied as `record` records the step (none: the state as it is). */
  readonly checkStep: StepCheck | null;
  /** Whether the step cycle started its tool executor (at its first tool call; stopped when it ends). */
  readonly toolExecutorStarted: boolean;
  /**
   * Messages steered in since the state was last handed on: kept here, not in `state`, while a
   * worker answers for that state (a changed state would make its answer stale); they join the
   * state's steering section where the step is recorded or the run ends, so a save keeps them.
   */
  readonly steering: readonly Message[];
  /**
   * A subagent's way to save the intent of its step (it has no session of its own): its caller
   * saves it into its own intent, up to the root's session. Null for a root (it saves to its session).
   */
  readonly intentSave: IntentSave | null;
  /** The budget ledger scopes the run's model calls charge (a subagent: its caller's); none: []. */
  readonly ledgerScopes: readonly string[];
}

/**
 * Saves a subagent's step before its unsafe calls start: `state` is the child's intent (the step in
 * flight with the calls about to start), kept by its caller until the caller's step is saved.
 */
export type IntentSave = (state: AgentState) => Promise<void>;

export interface LoopSession {
  readonly id: string;
  readonly version: number | null;
}

export interface LoopInput {
  readonly state: AgentState;
  readonly hookStages?: readonly HookStage[];
  readonly budget?: ExecutionBudget;
  readonly session?: LoopSession | null;
  /** Send tool and text reports through the machine (to listeners and inspectors). Default true. */
  readonly reports?: boolean;
  /** Something can see the run's states (`LoopContext.observed`). Default: `reports`. */
  readonly observed?: boolean;
  /**
   * Checks that run synchronously on a finished step before it is recorded (the runtime's
   * structured-output guard, finish-reason guard and error policy). Default none.
   */
  readonly checkStep?: StepCheck;
  /** For a subagent: how its intent is saved through its caller (`LoopContext.intentSave`). */
  readonly intentSave?: IntentSave | null;
  /** The budget ledger scopes the run charges (`LoopContext.ledgerScopes`). Default none. */
  readonly ledgerScopes?: readonly string[];
}

/**
 * The agent actor, as its workers, its runtime actions and its listeners hold it: the events it
 * takes, and what they may read of its snapshot (typed: read where the run's live state matters,
 * as whether the run is still in progress). The chart's `self` and an `Actor<typeof agentLoop>` are both one.
 */
export type AgentRef = ActorRef<AgentSnapshotView, LoopEvent>;

/** What the agent actor's snapshot shows its workers and listeners: its status, state value and context. */
type AgentSnapshotView = Snapshot<unknown> & {
  readonly value: StateValue;
  readonly context: LoopContext;
};

/**
 * What a worker (`hooks`, `driver`, `toolExecutor`, `checkpoint`) is made with (`workerInput`): the
 * agent actor it works for, and what it needs of the agent's context. These parts of the context are
 * fixed for the actor's life (only `state`, the session's version and the step's bookkeeping
 * change), so a worker, which lives an execution at most, takes them once, not from its agent's
 * snapshot at each request.
 */
export interface WorkerInput {
  /** The agent actor the worker works for: it answers it, and sends it reports and subagent spawns. */
  readonly agent: AgentRef;
  /** The id of the session the run saves to (`LoopContext.session`); null without one. */
  readonly sessionId: string | null;
  /** Whether the run takes tool and text reports (`LoopContext.reports`). */
  readonly reports: boolean;
  /** The budget the run is held to (`LoopContext.budget`): its subagents' are capped by its remainder. */
  readonly budget: ExecutionBudget;
  /** A subagent's way to save its step's intent through its caller (`LoopContext.intentSave`). */
  readonly intentSave: IntentSave | null;
  /** The budget ledger scopes the run's model calls charge (`LoopContext.ledgerScopes`). */
  readonly ledgerScopes: readonly string[];
}

/** What the workers of the agent actor `self` with `context` are made with. */
export function workerInput({ context, self }: { context: LoopContext; self: AgentRef }): WorkerInput {
  return {
    agent: self,
    sessionId: context.session?.id ?? null,
    reports: context.reports,
    budget: context.budget,
    intentSave: context.intentSave,
    ledgerScopes: context.ledgerScopes,
  };
}

/** A synchronous check of the step in flight: the state with what it found recorded (errors, signals). */
export type StepCheck = (state: AgentState) => AgentState;

/** Events the machine accepts: the public ones and the reports its own actors send it. */
export type LoopEvent =
  | ExecuteEvent
  | { type: 'user.message'; text: string }
  | { type: 'stop'; reason?: string }
  | SteerEvent
  | ApprovalEvent
  | ReportEvent
  | SubagentEvent
  | WorkerAnswer;

/**
 * Runs the actor's state, or `state` when given: the runtime runs an idle agent actor again this
 * way (its run of a new state needs no new actor). Only an actor that rests (`pending`, an outcome)
 * takes it.
 */
type ExecuteEvent = { type: 'execute'; state?: AgentState };

/** The state an `execute` (or `user.message`) starts with: the one it carries, or the actor's. */
export function stateToRun(context: LoopContext, event: LoopEvent): AgentState {
  return event.type === 'execute' && event.state !== undefined ? event.state : context.state;
}

/**
 * A message for the run in progress, which the model sees at its next step (the step in flight
 * finishes first): a `Message` (`Message.user(text)`) or plain text, a user message.
 */
type SteerEvent = { type: 'steer'; message: Message | string };

/** The message a `steer` event carries, or null when it carries none. */
export function steeredMessage(event: LoopEvent): Message | null {
  if (event.type !== 'steer') return null;
  if (typeof event.message === 'string') return event.message.length > 0 ? Message.user(event.message) : null;
  const message = event.message as Partial<Message> | null;
  return typeof message?.content === 'string' &&
    typeof message.metadata === 'object' &&
    message.metadata !== null
    ? (message as Message)
    : null;
}

/** Steered messages not yet in the state's steering section, and those in it. */
export function pendingSteering(context: LoopContext): readonly Message[] {
  return [...context.state.steeredMessages(), ...context.steering];
}

/** The steered messages that join the conversation as a step starts: none when the step will not call the model. */
export function steeringToApply(context: LoopContext): readonly Message[] {
  const stopping = context.state.execution()?.continuation().shouldStop() ?? false;
  return stopping ? [] : pendingSteering(context);
}

/**
 * A person's decision on a tool call awaiting approval. `callPath` (the pending call's) tells apart
 * calls with the same id inside different subagent calls; `path` (subagent names) is the older form.
 */
type ApprovalEvent = { path?: readonly string[]; callPath?: readonly string[] } & (
  | { type: 'approve'; toolCallId: string }
  | { type: 'reject'; toolCallId: string; reason?: string }
  | { type: 'edit'; toolCallId: string; input: unknown }
);

/**
 * A subagent tool asks its agent's actor to spawn the child agent actor (so the child lives in the
 * actor tree and the inspector), and to release it once the child's execution has ended.
 */
type SubagentEvent =
  | {
      type: 'subagent.spawn';
      id: string;
      name: string;
      state: AgentState;
      budget: ExecutionBudget;
      /** The subagent call's id (its child's intent is kept under it). */
      toolCallId: string;
    }
  | { type: 'subagent.release'; id: string }
  /** A subagent's intent was saved into this agent's session: the session's new version. */
  | { type: 'session.saved'; version: number };

/** The tool call, decision and route (`path`, `callPath`) an approval event carries. */
export function toDecision(event: LoopEvent): [string, ApprovalDecision, ApprovalRoute] {
  if (event.type !== 'approve' && event.type !== 'reject' && event.type !== 'edit')
    throw new TypeError(`not a decision: ${event.type}`);
  const route = routeOf(event);
  if (event.type === 'approve') return [event.toolCallId, { type: 'approve' }, route];
  if (event.type === 'reject') return [event.toolCallId, { type: 'reject', reason: event.reason }, route];
  return [event.toolCallId, { type: 'edit', args: event.input }, route];
}

/** The route a decision event gives (only the fields it has). */
export function routeOf(event: LoopEvent): ApprovalRoute {
  const route: { path?: readonly string[]; callPath?: readonly string[] } = {};
  if ('path' in event && event.path !== undefined) route.path = event.path;
  if ('callPath' in event && event.callPath !== undefined) route.callPath = event.callPath;
  return route;
}

/** Milliseconds left of the run's time budget (maxSeconds, deadline), or null without one. */
export function timeLimitOf(context: LoopContext, now = Date.now()): number | null {
  const { budget, state } = context;
  const started = state.execution()?.startedAtMs() ?? now;
  const limits: number[] = [];
  if (budget.maxSeconds !== null) limits.push(started + budget.maxSeconds * 1000);
  if (budget.deadline !== null) limits.push(budget.deadline.getTime());
  if (limits.length === 0) return null;
  return Math.max(0, Math.min(...limits) - now);
}

/** The new state a worker's `.done` answer carries. */
export const outputState = (event: unknown) => (event as { output?: unknown }).output as AgentState;

/**
 * Whether the run has somewhere to save: its session, or (a subagent) its caller, which saves its
 * steps' intents up to the root's session. Every save of the chart is gated by it.
 */
export const hasSaveTarget = (context: LoopContext): boolean =>
  context.session !== null || context.intentSave !== null;
