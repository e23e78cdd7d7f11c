import type { AgentState } from '../state/agent-state';
import { type Durability, durabilityOption } from './durability';
import {
  CheckpointNotFoundError,
  CorruptSessionError,
  ReadOnlyStoreError,
  SessionConflictError,
  SessionNotFoundError,
} from './errors';
import type { Checkpoint, JournaledSessionStore } from './journal/checkpoint';
import { assertVersion } from './journal/journal-log';
import { decodeRecord, withGeneration } from './journal/journal-record';
import { replay } from './journal/journal-replay';
import { type NextRecord, newGen, nextRecord } from './journal/journal-writer';
import { TipCache } from './journal/tip-cache';
import { bodyText } from './legacy-body';
import { decodeStoredState, parseJson, type StoredAt } from './session-document';
import { assertSessionId } from './session-id';
import type { LoadedSession } from './session-store';
import { LazySqliteConnection } from './sqlite-connection';
import { ensureTable, lazyStatement, type SqliteDatabase } from './sqlite-driver';
import { sqliteGroupCommit } from './sqlite-group-commit';
import { assertExpectedVersion, assertState } from './store-arguments';

/** Sessions saved before the journal: one row each, read as they are and moved at their next save. */
const SESSIONS_DDL = `CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY NOT NULL,
  version INTEGER NOT NULL CHECK (version >= 1),
  saved_at TEXT NOT NULL,
  state_json TEXT NOT NULL
) STRICT`;

/**
 * One row per checkpoint (a journal record, JOURNAL_FORMAT.md); the body is the record's UTF-8
 * JSON. (agent-machine 0.1 compressed it with raw DEFLATE; such bodies still load, see `bodyText`.)
 */
const JOURNAL_DDL = `CREATE TABLE IF NOT EXISTS session_journal (
  session_id TEXT NOT NULL,
  version INTEGER NOT NULL CHECK (version >= 1),
  gen TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('snapshot', 'delta')),
  step INTEGER NOT NULL,
  saved_at TEXT NOT NULL,
  body BLOB NOT NULL,
  PRIMARY KEY (session_id, version)
) STRICT;
CREATE INDEX IF NOT EXISTS session_journal_snapshots ON session_journal (session_id, version) WHERE kind = 'snapshot'`;

interface Tip {
  version: number;
  gen: string | null;
}

/** A row of table session_journal (without the session id). */
interface JournalRow {
  readonly version: number;
  readonly gen: string;
  readonly kind: string;
  readonly step: number;
  readonly saved_at: string;
  readonly body: Uint8Array;
}

/** A row as a load reads it (`recordTexts`): the body as text, or as bytes when compressed. */
interface StoredRecord {
  readonly version: number;
  readonly kind: string;
  readonly body: string | Uint8Array;
}

/** A save as the journal's append takes it. */
interface Append {
  readonly id: string;
  readonly expected: number | null;
  readonly step: number;
  readonly encode: (tip: Tip | null) => NextRecord;
}

function prepare(db: SqliteDatabase, create = true, durability: Durability = 'full') {
  ensureTable(db, 'sessions', ['id', 'version', 'saved_at', 'state_json'], SESSIONS_DDL, create);
  ensureTable(
    db,
    'session_journal',
    ['session_id', 'version', 'gen', 'kind', 'step', 'saved_at', 'body'],
    JOURNAL_DDL,
    create,
  );
  const lastRecord = lazyStatement(
    db,
    'SELECT version, gen FROM session_journal WHERE session_id = ? ORDER BY version DESC LIMIT 1',
  );
  const legacyVersion = lazyStatement(db, 'SELECT version FROM sessions WHERE id = ?');
  const insert = lazyStatement(
    db,
    'INSERT INTO session_journal (session_id, version, gen, kind, step, saved_at, body) VALUES (?, ?, ?, ?, ?, ?, ?)',
  );
  const removeLegacy = lazyStatement(db, 'DELETE FROM sessions WHERE id = ?');
  const removeRecords = lazyStatement(db, 'DELETE FROM session_journal WHERE session_id = ?');
  const copyRecords = lazyStatement(
    db,
    `INSERT INTO session_journal (session_id, version, gen, kind, step, saved_at, body)
     SELECT ?, version, gen, kind, step, saved_at, body FROM session_journal WHERE session_id = ? AND version < ?`,
  );
  const copyLegacy = lazyStatement(
    db,
    'INSERT INTO sessions (id, version, saved_at, state_json) SELECT ?, version, saved_at, state_json FROM sessions WHERE id = ?',
  );
  const tipOf = (id: string): Tip | null => {
    const row = lastRecord.get(id) as { version: number; gen: string } | undefined;
    if (row) return row;
    const legacy = legacyVersion.get(id) as { version: number } | undefined;
    return legacy ? { version: legacy.version, gen: null } : null;
  };
  // IMMEDIATE takes the write lock before the version is read, so a writer in another process
  // cannot slip in between the check and the append.
  const append = db.transaction(({ id, expected, step, encode }: Append): NextRecord => {
    const tip = tipOf(id);
    if ((tip?.version ?? null) !== expected)
      throw new SessionConflictError(id, expected, tip?.version ?? null);
    const next = encode(tip);
    insert.run(
      id,
      next.version,
      next.gen,
      next.kind,
      step,
      new Date().toISOString(),
      Buffer.from(next.text, 'utf8'),
    );
    if (tip && tip.gen === null) removeLegacy.run(id);
    return next;
  });
  // 'full': the writes that come while one is being flushed are made in one transaction and
  // flushed together (sqlite-group-commit.ts).
  const group = create && durability === 'full' ? sqliteGroupCommit(db) : null;
  /** Runs a write transaction; resolves once it is committed (and, with 'full' durability, on disk). */
  const write = async <R>(transaction: () => R): Promise<R> =>
    group ? group.run(transaction) : transaction();
  // The rows before the fork's chain are copied inside the database; the chain's are given.
  const fork = db.transaction((from: string, to: string, chain: readonly JournalRow[]) => {
    const existing = tipOf(to);
    if (existing) throw new SessionConflictError(to, null, existing.version);
    if (chain.length === 0) copyLegacy.run(to, from);
    else copyRecords.run(to, from, (chain[0] as JournalRow).version);
    for (const row of chain) insert.run(to, row.version, row.gen, row.kind, row.step, row.saved_at, row.body);
  });
  const remove = db.transaction((id: string) => {
    removeRecords.run(id);
    removeLegacy.run(id);
  });
  const reads = db.transaction((read: () => unknown) => read());
  // The newest snapshot at or before a version, and the records after it up to that version.
  const chain = `FROM session_journal WHERE session_id = @id AND version <= @upTo AND version >=
    (SELECT max(version) FROM session_journal WHERE session_id = @id AND kind = 'snapshot' AND version <= @upTo)
    ORDER BY version`;
  return {
    records: lazyStatement(db, `SELECT version, gen, kind, step, saved_at, body ${chain}`),
    /**
     * The same rows as a load reads them: a body that is the record's UTF-8 JSON (it starts with
     * `{"`) as text, which SQLite hands over as a string (a Buffer and its decoding cost a
     * 1,000-step load 0.2 times a parse of the state's JSON); any other (DEFLATE, 0.1) as bytes.
     */
    recordTexts: lazyStatement(
      db,
      `SELECT version, kind, CASE WHEN substr(body, 1, 2) = X'7B22' THEN CAST(body AS TEXT) ELSE body END AS body ${chain}`,
    ),
    newest: lazyStatement(db, 'SELECT max(version) AS version FROM session_journal WHERE session_id = ?'),
    /**
     * Runs reads in one transaction: they see one version of the database (WAL), so a save by
     * another connection between two of them cannot make records look unfollowable.
     */
    consistently: <T>(read: () => T): T => reads.deferred(read) as T,
    legacy: lazyStatement(db, 'SELECT version, saved_at, state_json FROM sessions WHERE id = ?'),
    checkpoints: lazyStatement(
      db,
      'SELECT version, step, saved_at FROM session_journal WHERE session_id = ? ORDER BY version',
    ),
    append: (save: Append) => write(() => append.immediate(save)),
    /** Before the database closes: the writes admitted are made and flushed. */
    finish: async () => group?.finish(),
    fork: (from: string, to: string, chain: readonly JournalRow[]) =>
      write(() => fork.immediate(from, to, chain)),
    remove: (id: string) => write(() => remove.immediate(id)),
    list: lazyStatement(
      db,
      'SELECT session_id AS id FROM session_journal UNION SELECT id FROM sessions ORDER BY id',
    ),
  };
}

/**
 * A SessionStore in a SQLite database, the default durable store: each checkpoint is one row of
 * table `session_journal` holding only what changed since the previous one (JOURNAL_FORMAT.md),
 * appended in one transaction with the version check, so the check holds across processes
 * sharing the file. Loads better-sqlite3 at first use (an optional dependency:
 * `npm install better-sqlite3`); WAL mode, each commit flushed to disk unless `durability` is
 * `'process'` (durability.ts). Sessions saved before the journal (table `sessions`)
 * load as they are and move to the journal at their next save.
 *
 * @example
 * const store = new SqliteSessionStore('agents.db');
 * const version = await store.save('chat-42', state, null);  // 1
 * await store.save('chat-42', next, version);                // 2
 * await store.close();
 */
export class SqliteSessionStore implements JournaledSessionStore {
  private readonly connection: LazySqliteConnection<ReturnType<typeof prepare>>;
  private readonly tips = new TipCache();
  /** What an acknowledged save survives (durability.ts). */
  readonly durability: Durability;

  /**
   * @param file the database file (created if missing), or ':memory:'.
   * @param options.durability `'full'` (default: each commit is flushed to disk before it is
   *   acknowledged; the saves that come during a flush share the next one, sqlite-group-commit.ts) or `'process'` (`synchronous = NORMAL`: an acknowledged save
   *   survives a crash of the process, not a power loss or OS crash).
   * @param options.readOnly open the file only to read it (a replay, a check): it must exist and
   *   hold the store's tables (else NotASessionStoreError); nothing is created or switched (WAL);
   *   saves, deletes and forks raise ReadOnlyStoreError.
   */
  constructor(
    readonly file: string,
    options: { durability?: Durability; readOnly?: boolean } = {},
  ) {
    this.durability = durabilityOption(options.durability);
    this.readOnly = options.readOnly === true;
    this.connection = this.readOnly
      ? new LazySqliteConnection(
          file,
          'SqliteSessionStore',
          (db) => prepare(db, false),
          this.durability,
          true,
        )
      : new LazySqliteConnection(
          file,
          'SqliteSessionStore',
          (db) => prepare(db, true, this.durability),
          this.durability,
          false,
          (db) => db.finish(),
        );
  }

  /** Opened with `readOnly`: nothing is written. */
  readonly readOnly: boolean;

  private writable(operation: string): void {
    if (this.readOnly) throw new ReadOnlyStoreError(`SqliteSessionStore(${this.file})`, operation);
  }

  async load(sessionId: string): Promise<LoadedSession | null> {
    const id = assertSessionId(sessionId);
    return this.connection.run((db) => this.read(db, id, null));
  }

  async save(sessionId: string, state: AgentState, expectedVersion: number | null): Promise<number> {
    this.writable('save');
    const id = assertSessionId(sessionId);
    assertState(state);
    assertExpectedVersion(expectedVersion);
    const version = (expectedVersion ?? 0) + 1;
    // Encoded before the transaction, so the write lock is held only for the write; encoded again
    // inside it only if the stored head is not the one this store remembers.
    const cached = this.tips.peek(id);
    const early = cached?.version === expectedVersion ? nextRecord(cached, state, version) : null;
    const next = await this.connection.run((db) =>
      db.append({
        id,
        expected: expectedVersion,
        step: state.stepCount(),
        encode: (tip) => (early && tip?.gen === cached?.gen ? early : nextRecord(null, state, version)),
      }),
    );
    this.tips.set(id, next.commit());
    return version;
  }

  async checkpoints(sessionId: string): Promise<Checkpoint[]> {
    const id = assertSessionId(sessionId);
    return this.connection.run((db) => {
      const rows = db.checkpoints.all(id) as { version: number; step: number; saved_at: string }[];
      if (rows.length > 0)
        return rows.map((r) => ({ version: r.version, stepNumber: r.step, savedAt: new Date(r.saved_at) }));
      const legacy = this.readLegacy(db, id);
      return legacy
        ? [{ version: legacy.version, stepNumber: legacy.state.stepCount(), savedAt: legacy.savedAt }]
        : [];
    });
  }

  async loadCheckpoint(sessionId: string, version: number): Promise<LoadedSession | null> {
    const id = assertSessionId(sessionId);
    assertVersion(version);
    return this.connection.run((db) => this.read(db, id, version));
  }

  async fork(sessionId: string, version: number, newSessionId: string): Promise<LoadedSession> {
    this.writable('fork');
    const id = assertSessionId(sessionId);
    const target = assertSessionId(newSessionId);
    assertVersion(version);
    return this.connection.run((db) => {
      const loaded = this.read(db, id, version);
      if (!loaded) throw new SessionNotFoundError(id);
      // The newest snapshot at or before the fork point and the deltas after it, under a
      // generation of the fork's own (JOURNAL_FORMAT.md); none for a session from before the journal.
      const at = this.at(id);
      const gen = newGen();
      const chain = (db.records.all({ id, upTo: version }) as JournalRow[]).map((row) => ({
        ...row,
        gen,
        body: Buffer.from(withGeneration(decodeRecord(bodyText(row.body, at), at), gen), 'utf8'),
      }));
      return db.fork(id, target, chain).then(() => loaded);
    });
  }

  async delete(sessionId: string): Promise<void> {
    this.writable('delete');
    const id = assertSessionId(sessionId);
    this.tips.delete(id);
    await this.connection.run((db) => db.remove(id));
  }

  async list(): Promise<string[]> {
    const rows = await this.connection.run((db) => db.list.all() as { id: string }[]);
    return rows.map((row) => row.id);
  }

  close(): Promise<void> {
    this.tips.clear();
    return this.connection.close();
  }

  private read(db: ReturnType<typeof prepare>, id: string, version: number | null): LoadedSession | null {
    const at = this.at(id);
    // Forgotten first: after a load that fails, the next save writes the whole state again.
    if (version === null) this.tips.delete(id);
    const upTo = version ?? Number.MAX_SAFE_INTEGER;
    const [rows, newest] = db.consistently(
      () =>
        [
          db.recordTexts.all({ id, upTo }) as StoredRecord[],
          (db.newest.get(id) as { version: number | null }).version,
        ] as const,
    );
    if (rows.length === 0) {
      if (newest !== null) {
        if (version !== null && version > newest) throw new CheckpointNotFoundError(id, version);
        // Records without a snapshot to start from: its row is gone, or its kind is damaged.
        throw new CorruptSessionError(
          id,
          `the journal has records up to version ${newest} but no snapshot at or before version ${version ?? newest}`,
          at.location,
        );
      }
      const legacy = this.readLegacy(db, id);
      if (!legacy) return null;
      if (version !== null && legacy.version !== version) throw new CheckpointNotFoundError(id, version);
      return { state: legacy.state, version: legacy.version };
    }
    const last = rows[rows.length - 1] as StoredRecord;
    if (version !== null && last.version !== version) throw new CheckpointNotFoundError(id, version);
    const replayed = replay(
      rows.map((row) => {
        const text = typeof row.body === 'string' ? row.body : bodyText(row.body, at);
        const record = decodeRecord(text, at);
        // The row's columns are what the queries select by: they must say what the record says.
        if (record.v !== row.version || record.kind !== row.kind)
          throw new CorruptSessionError(
            id,
            `the row of version ${row.version} (${row.kind}) holds record ${record.v} (${record.kind})`,
            at.location,
          );
        return record;
      }),
      at,
    );
    if (version === null) this.tips.set(id, replayed.tip);
    return { state: replayed.state, version: replayed.version };
  }

  private readLegacy(db: ReturnType<typeof prepare>, id: string) {
    const row = db.legacy.get(id) as { version: number; saved_at: string; state_json: string } | undefined;
    if (!row) return null;
    const at: StoredAt = { sessionId: id, location: `${this.file}#sessions/${id}` };
    return {
      version: row.version,
      savedAt: new Date(row.saved_at),
      state: decodeStoredState(parseJson(row.state_json, at), at),
    };
  }

  private at(sessionId: string): StoredAt {
    return { sessionId, location: `${this.file}#session_journal/${sessionId}` };
  }
}
