/**
 * Names the main entry exported before they moved to `agent-machine/stores`
 * (session and execution stores): deprecated there for one release, each its new home's own value.
 */
import * as stores from '../persistence/index';

/** @deprecated Import from `agent-machine/stores`. */
export const assertSessionId = stores.assertSessionId;
/** @deprecated Import from `agent-machine/stores`. */
export const CorruptExecutionRecordError = stores.CorruptExecutionRecordError;
/** @deprecated Import from `agent-machine/stores`. */
export type CorruptExecutionRecordError = stores.CorruptExecutionRecordError;
/** @deprecated Import from `agent-machine/stores`. */
export const CorruptSessionError = stores.CorruptSessionError;
/** @deprecated Import from `agent-machine/stores`. */
export type CorruptSessionError = stores.CorruptSessionError;
/** @deprecated Import from `agent-machine/stores`. */
export const DuplicateExecutionError = stores.DuplicateExecutionError;
/** @deprecated Import from `agent-machine/stores`. */
export type DuplicateExecutionError = stores.DuplicateExecutionError;
/** @deprecated Import from `agent-machine/stores`. */
export const ExecutionNotFinishedError = stores.ExecutionNotFinishedError;
/** @deprecated Import from `agent-machine/stores`. */
export type ExecutionNotFinishedError = stores.ExecutionNotFinishedError;
/** @deprecated Import from `agent-machine/stores`. */
export const ExecutionNotFoundError = stores.ExecutionNotFoundError;
/** @deprecated Import from `agent-machine/stores`. */
export type ExecutionNotFoundError = stores.ExecutionNotFoundError;
/** @deprecated Import from `agent-machine/stores`. */
export const ExecutionRecord = stores.ExecutionRecord;
/** @deprecated Import from `agent-machine/stores`. */
export type ExecutionRecord = stores.ExecutionRecord;
/** @deprecated Import from `agent-machine/stores`. */
export type ExecutionRecordJSON = stores.ExecutionRecordJSON;
/** @deprecated Import from `agent-machine/stores`. */
export type FinishedStatus = stores.FinishedStatus;
/** @deprecated Import from `agent-machine/stores`. */
export const isValidSessionId = stores.isValidSessionId;
/** @deprecated Import from `agent-machine/stores`. */
export const JOURNAL_FORMAT_VERSION = stores.JOURNAL_FORMAT_VERSION;
/** @deprecated Import from `agent-machine/stores`. */
export type JournaledSessionStore = stores.JournaledSessionStore;
/** @deprecated Import from `agent-machine/stores`. */
export const MAX_SESSION_ID_LENGTH = stores.MAX_SESSION_ID_LENGTH;
/** @deprecated Import from `agent-machine/stores`. */
export const NotASessionStoreError = stores.NotASessionStoreError;
/** @deprecated Import from `agent-machine/stores`. */
export type NotASessionStoreError = stores.NotASessionStoreError;
/** @deprecated Import from `agent-machine/stores`. */
export const openStoreReadOnly = stores.openStoreReadOnly;
/** @deprecated Import from `agent-machine/stores`. */
export const ReadOnlyStoreError = stores.ReadOnlyStoreError;
/** @deprecated Import from `agent-machine/stores`. */
export type ReadOnlyStoreError = stores.ReadOnlyStoreError;
/** @deprecated Import from `agent-machine/stores`. */
export const SessionFileLockedError = stores.SessionFileLockedError;
/** @deprecated Import from `agent-machine/stores`. */
export type SessionFileLockedError = stores.SessionFileLockedError;
/** @deprecated Import from `agent-machine/stores`. */
export const SqliteDriverLoadError = stores.SqliteDriverLoadError;
/** @deprecated Import from `agent-machine/stores`. */
export type SqliteDriverLoadError = stores.SqliteDriverLoadError;
/** @deprecated Import from `agent-machine/stores`. */
export const SqliteDriverMissingError = stores.SqliteDriverMissingError;
/** @deprecated Import from `agent-machine/stores`. */
export type SqliteDriverMissingError = stores.SqliteDriverMissingError;
/** @deprecated Import from `agent-machine/stores`. */
export const SqliteSchemaError = stores.SqliteSchemaError;
/** @deprecated Import from `agent-machine/stores`. */
export type SqliteSchemaError = stores.SqliteSchemaError;
/** @deprecated Import from `agent-machine/stores`. */
export const stateFromRecord = stores.stateFromRecord;
/** @deprecated Import from `agent-machine/stores`. */
export const StoreClosedError = stores.StoreClosedError;
/** @deprecated Import from `agent-machine/stores`. */
export type StoreClosedError = stores.StoreClosedError;
/** @deprecated Import from `agent-machine/stores`. */
export type StoredSession = stores.StoredSession;
