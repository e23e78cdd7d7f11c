import type { AgentState } from '../state/agent-state';
import { SessionConflictError } from './errors';
import { decodeStoredState, parseJson, type StoredAt } from './session-document';
import { assertSessionId } from './session-id';
import type { LoadedSession, SessionStore } from './session-store';
import { LazySqliteConnection } from './sqlite-connection';
import { ensureTable, type SqliteDatabase } from './sqlite-driver';
import { assertExpectedVersion, assertState } from './store-arguments';

const SESSIONS_DDL = `CREATE TABLE IF NOT EXISTS sessions (
  id TEXT PRIMARY KEY NOT NULL,
  version INTEGER NOT NULL CHECK (version >= 1),
  saved_at TEXT NOT NULL,
  state_json TEXT NOT NULL
) STRICT`;

interface Row {
  version: number;
  state_json: string;
}

function prepare(db: SqliteDatabase) {
  ensureTable(db, 'sessions', ['id', 'version', 'saved_at', 'state_json'], SESSIONS_DDL);
  const selectVersion = db.prepare('SELECT version FROM sessions WHERE id = ?');
  const insert = db.prepare('INSERT INTO sessions (id, version, saved_at, state_json) VALUES (?, 1, ?, ?)');
  const update = db.prepare(
    'UPDATE sessions SET version = version + 1, saved_at = ?, state_json = ? WHERE id = ? AND version = ?',
  );
  const versionOf = (id: string) =>
    (selectVersion.get(id) as { version: number } | undefined)?.version ?? null;
  // IMMEDIATE takes the write lock before the version is read, so a writer in another process
  // cannot slip in between the check and the write.
  const save = db.transaction(
    (id: string, expected: number | null, savedAt: string, json: string): number => {
      if (expected === null) {
        const actual = versionOf(id);
        if (actual !== null) throw new SessionConflictError(id, null, actual);
        insert.run(id, savedAt, json);
        return 1;
      }
      if (update.run(savedAt, json, id, expected).changes === 1) return expected + 1;
      throw new SessionConflictError(id, expected, versionOf(id));
    },
  );
  return {
    select: db.prepare('SELECT version, state_json FROM sessions WHERE id = ?'),
    save: (id: string, expected: number | null, savedAt: string, json: string) =>
      save.immediate(id, expected, savedAt, json),
    remove: db.prepare('DELETE FROM sessions WHERE id = ?'),
    list: db.prepare('SELECT id FROM sessions ORDER BY id'),
  };
}

/**
 * A SessionStore in a SQLite database (table `sessions`), the default durable store. Loads
 * better-sqlite3 at first use (an optional dependency: `npm install better-sqlite3`); WAL mode, and
 * each save is one transaction (`UPDATE ... WHERE version = ?`), so the version check holds across
 * processes sharing the file, too.
 *
 * @example
 * const store = new SqliteSessionStore('agents.db');
 * const version = await store.save('chat-42', state, null);  // 1
 * await store.save('chat-42', next, version);                // 2
 * await store.close();
 */
export class SqliteSessionStore implements SessionStore {
  private readonly connection: LazySqliteConnection<ReturnType<typeof prepare>>;

  /** @param file the database file (created if missing), or ':memory:'. */
  constructor(readonly file: string) {
    this.connection = new LazySqliteConnection(file, 'SqliteSessionStore', prepare);
  }

  async load(sessionId: string): Promise<LoadedSession | null> {
    const id = assertSessionId(sessionId);
    const row = await this.connection.run((db) => db.select.get(id) as Row | undefined);
    if (!row) return null;
    const at = this.at(id);
    return { version: row.version, state: decodeStoredState(parseJson(row.state_json, at), at) };
  }

  async save(sessionId: string, state: AgentState, expectedVersion: number | null): Promise<number> {
    const id = assertSessionId(sessionId);
    assertState(state);
    assertExpectedVersion(expectedVersion);
    // Serialized before the transaction, so the write lock is held only for the write.
    const json = JSON.stringify(state);
    return this.connection.run((db) => db.save(id, expectedVersion, new Date().toISOString(), json));
  }

  async delete(sessionId: string): Promise<void> {
    const id = assertSessionId(sessionId);
    await this.connection.run((db) => db.remove.run(id));
  }

  async list(): Promise<string[]> {
    const rows = await this.connection.run((db) => db.list.all() as { id: string }[]);
    return rows.map((row) => row.id);
  }

  close(): Promise<void> {
    return this.connection.close();
  }

  private at(sessionId: string): StoredAt {
    return { sessionId, location: `${this.file}#sessions/${sessionId}` };
  }
}
