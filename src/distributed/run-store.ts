import type { LoadedSession, SessionStore } from '../persistence/session-store';
import type { AgentState } from '../state/agent-state';
import type { SessionLockLostError } from './errors';

/** Why a run was halted: released at a step boundary (worker closing), or its session lock was lost. */
export type HaltReason =
  | { readonly kind: 'released' }
  | { readonly kind: 'lock-lost'; readonly error: SessionLockLostError };

/**
 * The store one job's run checkpoints through: the worker's store, plus what the worker needs to
 * hand a run on safely.
 *
 * - `drain()`: the next checkpoint of an execution in progress is written, and then the run is
 *   halted (its save never resolves, so the run goes no further in this process: no model call,
 *   no tool call, no hook). The stored checkpoint is exactly the one another worker resumes from.
 * - `halt(lock lost)`: no more writes at all; the run is frozen at its next save.
 * - The first save error (a version conflict, a Redis outage) is kept, so the job fails with it
 *   (and is retried) rather than finishing with a state that is not stored.
 *
 * A frozen run's promise never settles; nothing refers to it once the job has moved on, so it is
 * collected with the actor.
 */
export class RunStore implements SessionStore {
  /** The version of the last checkpoint this run wrote. */
  version: number | null = null;
  /** The first error a save raised, or null. */
  saveError: unknown = null;
  /** Resolves when the run is halted. */
  readonly halted: Promise<HaltReason>;
  private haltReason: HaltReason | null = null;
  private draining = false;
  private resolveHalt!: (reason: HaltReason) => void;

  constructor(private readonly inner: SessionStore) {
    this.halted = new Promise((resolve) => {
      this.resolveHalt = resolve;
    });
  }

  /** Halt after the next checkpoint of the execution in progress (the current step finishes). */
  drain(): void {
    this.draining = true;
  }

  halt(reason: HaltReason): void {
    if (this.haltReason) return;
    this.haltReason = reason;
    this.resolveHalt(reason);
  }

  load(sessionId: string): Promise<LoadedSession | null> {
    return this.inner.load(sessionId);
  }

  async save(sessionId: string, state: AgentState, expectedVersion: number | null): Promise<number> {
    if (this.haltReason) return frozen();
    let version: number;
    try {
      version = await this.inner.save(sessionId, state, expectedVersion);
    } catch (error) {
      this.saveError ??= error;
      throw error;
    }
    this.version = version;
    if (this.haltReason) return frozen();
    if (this.draining && state.status() === 'in_progress') {
      this.halt({ kind: 'released' });
      return frozen();
    }
    return version;
  }

  delete(sessionId: string): Promise<void> {
    return this.inner.delete(sessionId);
  }

  list(): Promise<string[]> {
    return this.inner.list();
  }

  /** The worker's store belongs to its owner: closing a run's view of it closes nothing. */
  async close(): Promise<void> {}
}

function frozen(): Promise<never> {
  return new Promise<never>(() => {});
}
