/** Running an agent actor to where it rests: its outcome, or a wait for decisions on tool calls. */
import type { SnapshotFrom, Subscription } from 'xstate';
import { type LoopSession, LoopTag } from '../../machines/agentLoop';
import type { RunHandle } from '../chat/running-actor';
import type { AgentState } from '../state/agent-state';
import { AgentMachineError } from '../state/errors';
import type { RunListener } from '../state/event-source';
import type { AgentActor, CreateActorOptions, ExecuteOptions } from './agent-actor';
import { listenToRun } from './run-events';

/** An actor error the run could not record (a bug, or a hook returning something else). */
export class AgentRuntimeError extends AgentMachineError {
  static override get name(): string {
    return 'AgentRuntimeError';
  }

  constructor(
    message: string,
    readonly state: AgentState,
    options?: { cause?: unknown },
  ) {
    super('AGENT_RUNTIME', message, options);
  }
}

/**
 * Options of the runtime's own actors: `reports: false` when no one can listen; `observed: false`
 * when no one can see the run's states (`LoopContext.observed`; default: `reports`).
 */
export interface InternalActorOptions extends CreateActorOptions {
  readonly reports?: boolean;
  readonly observed?: boolean;
  /** Given the run's actor as it is made: a chat's handle on its run, which it steers (no inspection). */
  readonly runHandle?: RunHandle;
}

/**
 * Options of `execute` the runtime's own callers give (a chat turn): `storedVersion`, the version
 * of the session they loaded (null: none stored), so that the start does not load it again.
 */
export interface InternalExecuteOptions extends ExecuteOptions {
  readonly storedVersion?: number | null;
  readonly runHandle?: RunHandle;
}

/**
 * The options of a run's actor. Nobody can listen to an actor that execute() keeps to itself,
 * unless it is inspected or onEvent is given; nobody sees its states unless it is inspected (a
 * tracer is the agent's: `createActor` adds it). (`Object.assign`, not a spread and a key: on
 * Node 20 an optimised spread followed by a new key gives every object a hidden class of its own.)
 */
export function listened(
  options: { inspect?: unknown },
  onEvent: unknown,
  session?: LoopSession,
): InternalActorOptions {
  const observed = options.inspect !== undefined;
  const reports = observed || onEvent !== undefined;
  return Object.assign({}, options as CreateActorOptions, { reports, observed, session });
}

/** Starts the actor, sends `execute`, resolves with the state at its outcome, and stops the actor. */
export function runToOutcome(
  actor: AgentActor,
  signal: AbortSignal | undefined,
  onEvent?: RunListener,
  waitsOn?: WaitsOn,
): Promise<AgentState> {
  if (onEvent) listenToRun(actor, onEvent);
  const outcome = awaitOutcome(actor, { signal, waitsOn, release: stopWhenSettled });
  actor.start();
  return outcome;
}

/** How `awaitOutcome` waits for a run. */
export interface OutcomeOptions {
  /** Aborting it sends `stop`. */
  readonly signal?: AbortSignal | undefined;
  /** A run waiting for decisions that goes on (the caller sends it something) instead of resolving. */
  readonly waitsOn?: WaitsOn;
  /** Told when the run settles (with the snapshot it rests in; null on an error). */
  readonly release?: Release;
  /** The state `execute` carries: an idle actor run again. */
  readonly state?: AgentState;
}

/**
 * Sends `execute` to an agent actor, started or about to start, and resolves with its state once
 * it rests: at an outcome, or waiting for decisions. An actor error rejects with AgentRuntimeError.
 */
export function awaitOutcome(actor: AgentActor, options: OutcomeOptions = {}): Promise<AgentState> {
  const { signal, waitsOn, release, state } = options;
  return new Promise<AgentState>((resolve, reject) => {
    const wait = new OutcomeWait(actor, signal, resolve, reject, waitsOn, release);
    // listened to before `execute`: a started actor may rest before `send` returns
    const aborted = signal?.aborted ?? false;
    if (!aborted) signal?.addEventListener('abort', wait, { once: true });
    actor.send(state === undefined ? EXECUTE : { type: 'execute', state });
    if (aborted) wait.handleEvent();
  });
}

const EXECUTE = { type: 'execute' } as const;

/** What is done with an agent actor once its run settled (`snapshot`: where it rests; null after an error). */
export type Release = (actor: AgentActor, snapshot: SnapshotFrom<AgentActor> | null) => void;

/** Stops the actor, once the observer call that settled its run has returned. */
const stopWhenSettled: Release = (actor) => queueMicrotask(() => actor.stop());

/**
 * Whether a run that waits for decisions goes on (true: the caller sends it something, as a replay
 * sends the stop a person sent there) rather than resolving with the waiting state.
 */
export type WaitsOn = (waiting: AgentState) => boolean;

/**
 * One wait for a run's outcome: the actor's observer and the signal's abort listener. An object
 * with methods, not closures: the build keeps function names (`keepNames`), which makes each named
 * closure a slow dictionary-mode object when it is made, and this is made once per run.
 */
class OutcomeWait {
  #subscription: Subscription | undefined;
  #settled = false;

  constructor(
    private readonly actor: AgentActor,
    private readonly signal: AbortSignal | undefined,
    private readonly resolve: (state: AgentState) => void,
    private readonly reject: (error: AgentRuntimeError) => void,
    private readonly waitsOn?: WaitsOn,
    private readonly release?: Release,
  ) {
    // an actor already stopped answers at once, before `subscribe` returns
    this.#subscription = actor.subscribe(this);
  }

  next(snapshot: SnapshotFrom<AgentActor>): void {
    // the run rests: at an outcome, or waiting for decisions on tool calls
    if (snapshot.hasTag(LoopTag.outcome) || snapshot.hasTag(LoopTag.awaitingDecisions)) {
      if (snapshot.hasTag(LoopTag.awaitingDecisions) && this.waitsOn?.(snapshot.context.state)) return;
      if (this.finish(snapshot)) this.resolve(snapshot.context.state);
    }
  }

  error(error: unknown): void {
    const state = this.actor.getSnapshot().context.state;
    const message = `The agent actor failed: ${(error as Error)?.message}`;
    if (this.finish(null)) this.reject(new AgentRuntimeError(message, state, { cause: error }));
  }

  /** The signal's abort: the run is asked to stop. */
  handleEvent(): void {
    this.actor.send({ type: 'stop', reason: abortReason(this.signal) });
  }

  private finish(snapshot: SnapshotFrom<AgentActor> | null): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.signal?.removeEventListener('abort', this);
    this.#subscription?.unsubscribe();
    this.release?.(this.actor, snapshot);
    return true;
  }
}

function abortReason(signal: AbortSignal | undefined): string {
  const reason = signal?.reason;
  if (reason instanceof Error && reason.name !== 'AbortError') return reason.message;
  if (typeof reason === 'string' && reason) return reason;
  return 'Stopped by user request';
}
