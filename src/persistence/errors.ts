import { AgentMachineError } from '../state/errors';

/**
 * A session id the stores cannot use. Ids become file names and primary keys, so they are kept to
 * a portable alphabet: 1 to 200 characters of `A-Z a-z 0-9 . _ -`, and not `.` or `..`.
 */
export class InvalidSessionIdError extends AgentMachineError {
  static override get name(): string {
    return 'InvalidSessionIdError';
  }

  constructor(
    readonly sessionId: unknown,
    readonly detail: string,
  ) {
    super(
      'INVALID_SESSION_ID',
      `Invalid session id ${describeId(sessionId)}: ${detail}. Use 1 to 200 characters of ` +
        'A-Z, a-z, 0-9, ".", "_" and "-" (not "." or ".."), e.g. a UUID or "chat-42".',
    );
  }
}

/**
 * `save()` was given a version that is not the stored one (or `null` for a session that exists, or
 * a version for one that does not). Nothing was written.
 */
export class SessionConflictError extends AgentMachineError {
  static override get name(): string {
    return 'SessionConflictError';
  }

  constructor(
    readonly sessionId: string,
    /** The version the caller passed (`null`: "create, must not exist"). */
    readonly expectedVersion: number | null,
    /** The stored version (`null`: the session does not exist). */
    readonly actualVersion: number | null,
  ) {
    super('SESSION_CONFLICT', conflictMessage(sessionId, expectedVersion, actualVersion));
  }
}

function conflictMessage(sessionId: string, expected: number | null, actual: number | null): string {
  const id = JSON.stringify(sessionId);
  if (expected === null) {
    return (
      `Session ${id} already exists (version ${actual}); nothing was written. To update it, load it ` +
      `and save with expectedVersion ${actual}; to replace it, delete it first.`
    );
  }
  if (actual === null) {
    return (
      `Session ${id} does not exist (expected version ${expected}); nothing was written. ` +
      'Create it with expectedVersion null.'
    );
  }
  return (
    `Session ${id} is at version ${actual}, not the expected ${expected}: another writer saved it ` +
    `first; nothing was written. Load it again, reapply your change and save with expectedVersion ${actual}.`
  );
}

/**
 * A stored session that cannot be read back: not JSON, truncated, an unknown format version, or a
 * state that fails `AgentState.fromJSON`. The stored data is left as it was.
 */
export class CorruptSessionError extends AgentMachineError {
  static override get name(): string {
    return 'CorruptSessionError';
  }

  constructor(
    readonly sessionId: string,
    /** What is wrong, e.g. `Invalid AgentState at execution.status: expected one of ...`. */
    readonly problem: string,
    /** Where it is stored: a file path, or `<database file>#sessions/<id>`. */
    readonly location: string,
    /** The path of the bad field inside the state (from InvalidStateError), or null. */
    readonly path: string | null = null,
    options?: { cause?: unknown },
  ) {
    super(
      'SESSION_CORRUPT',
      `Session ${JSON.stringify(sessionId)} is corrupt (${location}): ${problem}. The stored data was ` +
        `left untouched; restore it from a backup, or delete the session (store.delete(${JSON.stringify(sessionId)})) to start it afresh.`,
      options,
    );
  }
}

/**
 * A session file stayed locked by another process (one of its saves, deletes or forks) for longer
 * than a FileSessionStore waits (`lockTimeoutMs`). Nothing was written.
 */
export class SessionFileLockedError extends AgentMachineError {
  static override get name(): string {
    return 'SessionFileLockedError';
  }

  constructor(
    /** The lock file, `<dir>/<sessionId>.journal.lock`. */
    readonly lockFile: string,
    /** Who holds it, as the lock file says: a process id and a host name. */
    readonly holder: { readonly pid: number; readonly host: string },
    readonly waitedMs: number,
  ) {
    super(
      'SESSION_FILE_LOCKED',
      `${lockFile} is held by process ${holder.pid} on host ${JSON.stringify(holder.host)} and was not ` +
        `released within ${waitedMs} ms; nothing was written. If that process is gone (a lock of a ` +
        'process on this machine is taken over once it is gone; one of another machine is not), remove the lock file.',
    );
  }
}

/** An operation on a store after `close()`. */
export class StoreClosedError extends AgentMachineError {
  static override get name(): string {
    return 'StoreClosedError';
  }

  constructor(readonly store: string) {
    super('STORE_CLOSED', `${store} is closed; create a new store to read or write sessions again.`);
  }
}

/** `better-sqlite3` is not installed: it is an optional dependency, needed only for SQLite stores. */
export class SqliteDriverMissingError extends AgentMachineError {
  static override get name(): string {
    return 'SqliteDriverMissingError';
  }

  constructor(
    readonly moduleName: string,
    options?: { cause?: unknown },
  ) {
    super(
      'SQLITE_DRIVER_MISSING',
      `The SQLite stores need the optional package "${moduleName}", which is not installed. ` +
        `Run \`npm install ${moduleName}\`, or use FileSessionStore / InMemorySessionStore.`,
      options,
    );
  }
}

/** `better-sqlite3` is installed but cannot be loaded (usually a native build for another Node). */
export class SqliteDriverLoadError extends AgentMachineError {
  static override get name(): string {
    return 'SqliteDriverLoadError';
  }

  constructor(
    readonly moduleName: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      'SQLITE_DRIVER_LOAD_FAILED',
      `The package "${moduleName}" is installed but could not be loaded: ${detail}. Rebuild it for this ` +
        `Node version with \`npm rebuild ${moduleName}\`.`,
      options,
    );
  }
}

/** The database already has a table of the store's name with a different shape. */
export class SqliteSchemaError extends AgentMachineError {
  static override get name(): string {
    return 'SqliteSchemaError';
  }

  constructor(
    readonly file: string,
    readonly table: string,
    detail: string,
  ) {
    super(
      'SQLITE_SCHEMA_MISMATCH',
      `The table "${table}" in ${file} is not an agent-machine table: ${detail}. Use another database ` +
        'file for the store, or rename that table.',
    );
  }
}

/** `ExecutionRecord.fromState()` was given a state whose execution has not finished. */
export class ExecutionNotFinishedError extends AgentMachineError {
  static override get name(): string {
    return 'ExecutionNotFinishedError';
  }

  constructor(
    readonly executionId: string | null,
    readonly status: string,
  ) {
    super(
      'EXECUTION_NOT_FINISHED',
      executionId === null
        ? 'Cannot record an execution: the state has none (status pending). Record the state that ' +
            'agent.execute() resolved with, before calling forNextExecution().'
        : `Cannot record execution ${JSON.stringify(executionId)}: its status is ${status}, not ` +
            'completed, stopped or failed. Record the state that agent.execute() resolved with.',
    );
  }
}

/** An execution id that is already recorded: records are append-only. */
export class DuplicateExecutionError extends AgentMachineError {
  static override get name(): string {
    return 'DuplicateExecutionError';
  }

  constructor(readonly executionId: string) {
    super(
      'EXECUTION_EXISTS',
      `Execution ${JSON.stringify(executionId)} is already recorded; records are append-only. Record ` +
        'each finished execution once (a later execution of the agent has a new execution id).',
    );
  }
}

/** `rewind()` of an execution id that is not recorded. */
export class ExecutionNotFoundError extends AgentMachineError {
  static override get name(): string {
    return 'ExecutionNotFoundError';
  }

  constructor(readonly executionId: string) {
    super(
      'EXECUTION_NOT_FOUND',
      `Execution ${JSON.stringify(executionId)} is not recorded in this store. List what is with ` +
        'getByAgent(agentId).',
    );
  }
}

/** A stored execution record that cannot be read back. The stored data is left as it was. */
export class CorruptExecutionRecordError extends AgentMachineError {
  static override get name(): string {
    return 'CorruptExecutionRecordError';
  }

  constructor(
    readonly executionId: string,
    readonly problem: string,
    readonly location: string,
    readonly path: string | null = null,
    options?: { cause?: unknown },
  ) {
    super(
      'EXECUTION_RECORD_CORRUPT',
      `Execution record ${JSON.stringify(executionId)} is corrupt (${location}): ${problem}. The stored ` +
        'data was left untouched; restore it from a backup.',
      options,
    );
  }
}

function describeId(id: unknown): string {
  if (typeof id !== 'string') return `(a ${id === null ? 'null' : typeof id}, not a string)`;
  const shown = id.length > 60 ? `${id.slice(0, 60)}...` : id;
  return JSON.stringify(shown);
}

/** `agent.resume(sessionId)`, `decide`, a store's update... for a session the store does not have. */
export class SessionNotFoundError extends AgentMachineError {
  static override get name(): string {
    return 'SessionNotFoundError';
  }

  constructor(readonly sessionId: string) {
    super('SESSION_NOT_FOUND', `Session ${JSON.stringify(sessionId)} does not exist in the store.`);
  }
}

/** A session operation on an agent created without a `store`. */
export class NoSessionStoreError extends AgentMachineError {
  static override get name(): string {
    return 'NoSessionStoreError';
  }

  constructor(operation: string) {
    super(
      'NO_SESSION_STORE',
      `${operation} needs a session store: create the agent with createAgent({ ..., store })`,
    );
  }
}

/** `loadCheckpoint` or `fork` named a version the session does not have. */
export class CheckpointNotFoundError extends AgentMachineError {
  static override get name(): string {
    return 'CheckpointNotFoundError';
  }

  constructor(
    readonly sessionId: string,
    readonly version: number,
  ) {
    super(
      'CHECKPOINT_NOT_FOUND',
      `Session ${JSON.stringify(sessionId)} has no checkpoint at version ${version}: pick one of store.checkpoints(${JSON.stringify(sessionId)}).`,
    );
  }
}

/** A write to a store opened to be read only (`openStoreReadOnly`, `SqliteSessionStore` with `readOnly`). */
export class ReadOnlyStoreError extends AgentMachineError {
  static override get name(): string {
    return 'ReadOnlyStoreError';
  }

  constructor(
    readonly store: string,
    readonly operation: string,
  ) {
    super(
      'STORE_READ_ONLY',
      `${store} is open read-only: ${operation} was refused and nothing was written. Open the store without readOnly to write to it.`,
    );
  }
}

/** A path that holds no session store of this library (`openStoreReadOnly`): `detail` says why. */
export class NotASessionStoreError extends AgentMachineError {
  static override get name(): string {
    return 'NotASessionStoreError';
  }

  constructor(
    readonly path: string,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super('NOT_A_SESSION_STORE', `${path} is not a session store: ${detail}`, options);
  }
}
