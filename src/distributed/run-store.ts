import type { LoadedSession, SessionStore } from '../persistence/session-store';
import type { AgentState } from '../state/agent-state';
import { SessionLockLostError } from './errors';
import type { SessionLock } from './session-lock';

/** The lock a save is conditional on: its Redis key and the token its holder put there. */
interface SaveFence {
  readonly key: string;
  readonly token: string;
}

/** A store whose save can be made conditional on a session lock in the same Redis (RedisSessionStore). */
interface FencedSessionStore extends SessionStore {
  /** `save`, refused with SessionLockLostError (writing nothing) unless `fence.key` holds `fence.token`. */
  fencedSave(
    sessionId: string,
    state: AgentState,
    expectedVersion: number | null,
    fence: SaveFence,
  ): Promise<number>;
}

function fenced(store: SessionStore): store is FencedSessionStore {
  return typeof (store as Partial<FencedSessionStore>).fencedSave === 'function';
}

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
 * - Fencing (with the job's session `lock`): every save is conditional on the lock, not only on the
 *   session's version. A RedisSessionStore checks the lock's token in the save's own script; any
 *   other store has the lock checked just before the save. An intent save (the step's unsafe calls
 *   about to start) is checked again after it is written, so a worker that was paused past its
 *   lock (a long GC, a frozen VM) while another took the session over neither checkpoints nor
 *   starts an unsafe call: the run halts with SessionLockLostError (SESSION_LOCK_LOST).
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

  constructor(
    private readonly inner: SessionStore,
    private readonly lock: SessionLock | null = null,
  ) {
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
      version = await this.fencedSave(sessionId, state, expectedVersion);
    } catch (error) {
      if (error instanceof SessionLockLostError) {
        // the lock is someone else's now: nothing more is written, nothing more runs here
        this.halt({ kind: 'lock-lost', error });
        return frozen();
      }
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

  /** The save, conditional on the job's lock (in the store's script, or checked around it). */
  private async fencedSave(
    sessionId: string,
    state: AgentState,
    expectedVersion: number | null,
  ): Promise<number> {
    const lock = this.lock;
    if (!lock) return this.inner.save(sessionId, state, expectedVersion);
    const lost = lock.lost();
    if (lost) throw lost;
    const intent = (state.approval()?.started?.length ?? 0) > 0;
    if (fenced(this.inner)) {
      const fence = { key: lock.key, token: lock.token };
      try {
        return await this.inner.fencedSave(sessionId, state, expectedVersion, fence);
      } catch (error) {
        throw error instanceof SessionLockLostError ? lock.refused() : error;
      }
    }
    await lock.verify();
    const version = await this.inner.save(sessionId, state, expectedVersion);
    // the unsafe calls start once this resolves: the lock is checked once more first
    if (intent) await lock.verify();
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
