export type { Durability } from './durability';
export {
  CheckpointNotFoundError,
  CorruptExecutionRecordError,
  CorruptSessionError,
  DuplicateExecutionError,
  ExecutionNotFinishedError,
  ExecutionNotFoundError,
  InvalidSessionIdError,
  NoSessionStoreError,
  NotASessionStoreError,
  ReadOnlyStoreError,
  SessionConflictError,
  SessionFileLockedError,
  SessionNotFoundError,
  SqliteDriverLoadError,
  SqliteDriverMissingError,
  SqliteSchemaError,
  StoreClosedError,
} from './errors';
export {
  ExecutionRecord,
  type ExecutionRecordJSON,
  type FinishedStatus,
  stateFromRecord,
} from './execution-record';
export type { ExecutionStore } from './execution-store';
export { FileSessionStore } from './file-session-store';
export { InMemoryExecutionStore } from './in-memory-execution-store';
export { InMemorySessionStore, type StoredSession } from './in-memory-session-store';
export type { Checkpoint, JournaledSessionStore } from './journal/checkpoint';
export { JOURNAL_FORMAT_VERSION } from './journal/journal-record';
export { openStoreReadOnly } from './read-only-store';
export { assertSessionId, isValidSessionId, MAX_SESSION_ID_LENGTH } from './session-id';
export type { LoadedSession, SessionStore } from './session-store';
export { SqliteExecutionStore } from './sqlite-execution-store';
export { SqliteSessionStore } from './sqlite-session-store';
