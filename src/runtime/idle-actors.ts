/**
 * The agent actors of an agent's plain runs (`execute()` with no session, budget or actor option;
 * with or without `onEvent`), kept between runs: a run takes one that rests at an outcome and sends
 * it `execute` with its state, instead of making and starting an actor (about a seventh of a
 * one-step run, #38). Quiet runs and listened runs keep actors of their own (a listened run's
 * actor reports its events; #50).
 */
import type { Subscription } from 'xstate';
import { LoopTag, StateId, statePath } from '../../machines/agentLoop';
import type { AgentState } from '../state/agent-state';
import type { RunListener } from '../state/event-source';
import type { AgentActor } from './agent-actor';
import { listenToRun } from './run-events';
import { awaitOutcome, type Release } from './run-to-outcome';

/**
 * At most this many rest per agent and kind of run. Each holds the final state of its last run
 * until its next, so the bound keeps what an agent holds small; sequential runs need one.
 */
const MAX_IDLE = 4;

/** The top-level state of a completed run (atomic: its value is its name). */
const COMPLETED = statePath(StateId.completed);

export class IdleActors {
  readonly #quiet: AgentActor[] = [];
  readonly #listened: AgentActor[] = [];
  /** The listener of each listened actor's run in progress, removed when it settles. */
  readonly #listening = new Map<AgentActor, Subscription>();

  constructor(
    /**
     * A started-to-be actor for `state` (the agent's `createActor`, prepared as any run): a quiet
     * one (`reports` false), or one that reports its events to a listener.
     */
    private readonly create: (state: AgentState, reports: boolean) => AgentActor,
    /** The state a run starts with (the agent's system prompt and response format applied). */
    private readonly prepare: (state: AgentState) => AgentState,
  ) {}

  /** Runs `state` on an idle actor, or a new one, and resolves with its state at rest; `onEvent` hears its events. */
  run(state: AgentState, signal: AbortSignal | undefined, onEvent?: RunListener): Promise<AgentState> {
    const reports = onEvent !== undefined;
    const idle = (reports ? this.#listened : this.#quiet).pop();
    const actor = idle ?? this.create(state, reports);
    // listened to before `execute`: a resting actor runs it as it is sent
    if (onEvent) this.#listening.set(actor, listenToRun(actor, onEvent));
    if (idle !== undefined)
      return awaitOutcome(idle, { signal, release: this.release, state: this.prepare(state) });
    const outcome = awaitOutcome(actor, { signal, release: this.release });
    actor.start();
    return outcome;
  }

  /** Stops the actors at rest (the agent is closed). */
  clear(): void {
    for (const actor of [...this.#quiet.splice(0), ...this.#listened.splice(0)]) actor.stop();
  }

  /**
   * A run settled (every event of its last macrostep delivered): its listener is removed, and its
   * actor rests again if it is at an outcome (completed, stopped or failed) with no child left. An
   * actor that waits for decisions or errored is stopped, as is any beyond MAX_IDLE. A listened
   * run's actor rests again only once its run completed: a stopped or failed run may leave a tool
   * running, whose late report would reach the next run's listener.
   */
  private readonly release: Release = (actor, snapshot) => {
    const listener = this.#listening.get(actor);
    if (listener) {
      listener.unsubscribe();
      this.#listening.delete(actor);
    }
    const idle = listener ? this.#listened : this.#quiet;
    if (
      snapshot !== null &&
      snapshot.status === 'active' &&
      snapshot.hasTag(LoopTag.outcome) &&
      (!listener || snapshot.value === COMPLETED) &&
      !hasChildren(snapshot.children) &&
      idle.length < MAX_IDLE
    )
      idle.push(actor);
    else queueMicrotask(() => actor.stop());
  };
}

function hasChildren(children: object): boolean {
  for (const _ in children) return true;
  return false;
}
