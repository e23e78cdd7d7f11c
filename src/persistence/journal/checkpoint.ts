import type { LoadedSession, SessionStore } from '../session-store';

/** One checkpoint of a session: a version that can be loaded again or forked. */
export interface Checkpoint {
  readonly version: number;
  /** Recorded steps of the execution at this checkpoint. */
  readonly stepNumber: number;
  readonly savedAt: Date;
}

/**
 * A SessionStore that keeps every checkpoint of a session (its journal), so that any of them can
 * be read again or made the start of a new session. The built-in stores are all of this kind.
 *
 * @example
 * const [, second] = await store.checkpoints('chat-42');           // [{ version: 1, ... }, { version: 2, ... }]
 * await store.fork('chat-42', second.version, 'chat-42-retry');     // a new session from version 2
 * await agentWithOtherModel.resume('chat-42-retry');
 */
export interface JournaledSessionStore extends SessionStore {
  /** The session's checkpoints, oldest first; empty when there is no such session. */
  checkpoints(sessionId: string): Promise<Checkpoint[]>;
  /** The state at `version`, or null when there is no such session; CheckpointNotFoundError for a missing version. */
  loadCheckpoint(sessionId: string, version: number): Promise<LoadedSession | null>;
  /**
   * Creates `newSessionId` (which must not exist: SessionConflictError) from the checkpoint at
   * `version` of `sessionId`, and returns it at its version 1. The original is left as it is.
   */
  fork(sessionId: string, version: number, newSessionId: string): Promise<LoadedSession>;
}
