/**
 * The agent actors of an agent's quiet runs (`execute()` with no listener, session, budget or actor
 * option), kept between runs: a run takes one that rests at an outcome and sends it `execute` with
 * its state, instead of making and starting an actor (about a seventh of a one-step run, #38).
 */
import { LoopTag } from '../../machines/agentLoop';
import type { AgentState } from '../state/agent-state';
import type { AgentActor } from './agent-actor';
import { awaitOutcome, type Release } from './run-to-outcome';

/**
 * At most this many rest per agent. Each holds the final state of its last run until its next, so
 * the bound keeps what an agent holds small; sequential runs need one.
 */
const MAX_IDLE = 4;

export class IdleActors {
  readonly #idle: AgentActor[] = [];

  constructor(
    /** A started-to-be quiet actor for `state` (the agent's `createActor`, prepared as any run). */
    private readonly create: (state: AgentState) => AgentActor,
    /** The state a run starts with (the agent's system prompt and response format applied). */
    private readonly prepare: (state: AgentState) => AgentState,
  ) {}

  /** Runs `state` on an idle actor, or a new one, and resolves with its state at rest. */
  run(state: AgentState, signal: AbortSignal | undefined): Promise<AgentState> {
    const idle = this.#idle.pop();
    if (idle !== undefined)
      return awaitOutcome(idle, { signal, release: this.release, state: this.prepare(state) });
    const actor = this.create(state);
    const outcome = awaitOutcome(actor, { signal, release: this.release });
    actor.start();
    return outcome;
  }

  /** Stops the actors at rest (the agent is closed). */
  clear(): void {
    for (const actor of this.#idle.splice(0)) actor.stop();
  }

  /**
   * A run settled: its actor rests again if it is at an outcome (completed, stopped or failed) with
   * no child left. An actor that waits for decisions or errored is stopped, as is any beyond MAX_IDLE.
   */
  private readonly release: Release = (actor, snapshot) => {
    if (
      snapshot !== null &&
      snapshot.status === 'active' &&
      snapshot.hasTag(LoopTag.outcome) &&
      !hasChildren(snapshot.children) &&
      this.#idle.length < MAX_IDLE
    )
      this.#idle.push(actor);
    else queueMicrotask(() => actor.stop());
  };
}

function hasChildren(children: object): boolean {
  for (const _ in children) return true;
  return false;
}
