export {
  CorruptExecutionRecordError,
  CorruptSessionError,
  DuplicateExecutionError,
  ExecutionNotFinishedError,
  ExecutionNotFoundError,
  InvalidSessionIdError,
  NoSessionStoreError,
  SessionConflictError,
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
export { InMemorySessionStore } from './in-memory-session-store';
export { assertSessionId, isValidSessionId, MAX_SESSION_ID_LENGTH } from './session-id';
export type { LoadedSession, SessionStore } from './session-store';
export { SqliteExecutionStore } from './sqlite-execution-store';
export { SqliteSessionStore } from './sqlite-session-store';
