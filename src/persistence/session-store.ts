import type { AgentState } from '../state/agent-state';

/** A session as stored: its state and the version that `save()` must be given to update it. */
export interface LoadedSession {
  readonly state: AgentState;
  /** 1 after the first save, +1 on each save. */
  readonly version: number;
}

/**
 * Where an agent's state is checkpointed between steps and executions, under a session id.
 * Saves use optimistic concurrency: each save names the version it read, so of two writers that
 * read the same version only the first succeeds and the other gets SessionConflictError.
 *
 * Implementations: InMemorySessionStore, FileSessionStore, SqliteSessionStore, RedisSessionStore.
 * They behave identically (one contract test suite runs against all of them) and keep each
 * session as a journal of checkpoints (JournaledSessionStore, journal/JOURNAL_FORMAT.md).
 *
 * @example
 * const store: SessionStore = new SqliteSessionStore('agents.db');
 * let version = await store.save('chat-42', state, null);          // 1: created
 * version = await store.save('chat-42', next, version);            // 2
 * const loaded = await store.load('chat-42');                      // { state, version: 2 }
 */
export interface SessionStore {
  /**
   * The stored state and version, or null when there is no such session. A stored session that
   * cannot be read back raises CorruptSessionError (and is left untouched); a bad id raises
   * InvalidSessionIdError.
   */
  load(sessionId: string): Promise<LoadedSession | null>;
  /**
   * Stores `state` and returns the new version. `expectedVersion` is null to create the session
   * (it must not exist), else the version last loaded or saved. A mismatch raises
   * SessionConflictError and writes nothing.
   */
  save(sessionId: string, state: AgentState, expectedVersion: number | null): Promise<number>;
  /** Removes the session (also a corrupt one); nothing happens if it does not exist. */
  delete(sessionId: string): Promise<void>;
  /** The ids of the stored sessions, sorted. */
  list(): Promise<string[]>;
  /** Waits for operations in flight and releases the store; later calls raise StoreClosedError. */
  close(): Promise<void>;
}
