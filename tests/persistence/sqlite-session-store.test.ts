import { once } from 'node:events';
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createDeflateRaw, deflateRawSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CorruptSessionError } from '../../src/persistence/errors';
import {
  SqliteDriverMissingError,
  SqliteExecutionStore,
  SqliteSchemaError,
  SqliteSessionStore,
} from '../../src/persistence/index';
import { legacyInflateLimit } from '../../src/persistence/legacy-body';
import { loadSqliteDriver, openSqliteDatabase } from '../../src/persistence/sqlite-driver';
import { AgentState } from '../../src/state/agent-state';
import { appendStep, finishedState, tempDir } from './fixtures';

describe('SqliteSessionStore', () => {
  let dir: string;
  let remove: () => Promise<void>;
  let file: string;
  const opened: { close(): Promise<void> }[] = [];
  const open = <T extends { close(): Promise<void> }>(store: T): T => {
    opened.push(store);
    return store;
  };
  beforeEach(async () => {
    ({ dir, remove } = await tempDir());
    file = join(dir, 'agents.db');
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((s) => s.close()));
    await remove();
  });

  const inspect = <T>(fn: (db: Database.Database) => T): T => {
    const db = new Database(file, { readonly: true });
    try {
      return fn(db);
    } finally {
      db.close();
    }
  };

  it('keeps each checkpoint as a row of a WAL-mode table session_journal: a snapshot, then deltas', async () => {
    const store = open(new SqliteSessionStore(file));
    const state = await finishedState();
    await store.save('chat-42', state, null);
    await store.save('chat-42', state.withUserMessage('and now?'), 1);
    inspect((db) => {
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      const columns = (db.pragma('table_info(session_journal)') as { name: string; pk: number }[]).map(
        (c) => [c.name, c.pk],
      );
      expect(columns).toEqual([
        ['session_id', 1],
        ['version', 2],
        ['gen', 0],
        ['kind', 0],
        ['step', 0],
        ['saved_at', 0],
        ['body', 0],
      ]);
      const rows = db.prepare('SELECT * FROM session_journal ORDER BY version').all() as Record<
        string,
        unknown
      >[];
      expect(rows.map((r) => [r.session_id, r.version, r.kind, r.step])).toEqual([
        ['chat-42', 1, 'snapshot', 2],
        ['chat-42', 2, 'delta', 2],
      ]);
      expect(new Date(rows[0]?.saved_at as string).toISOString()).toBe(rows[0]?.saved_at);
      const delta = JSON.parse(String(rows[1]?.body));
      expect(delta.sections).toEqual({
        messages: { from: 4, items: [expect.objectContaining({ content: 'and now?' })] },
      });
      expect(delta.steps).toBeUndefined();
      expect(db.prepare('SELECT count(*) FROM sessions').pluck().get()).toBe(0);
    });
  });

  it('stores a record as its UTF-8 JSON, the text a load checks (not compressed)', async () => {
    const store = open(new SqliteSessionStore(file));
    await store.save('chat-42', await finishedState(), null);
    inspect((db) => {
      const body = db.prepare('SELECT body FROM session_journal').pluck().get() as Buffer;
      expect(body.toString('utf8')).toMatch(/^\{"journal":1,"v":1,.*,"crc":\d+\}$/);
    });
  });

  it('loads records stored compressed with raw DEFLATE (as written by agent-machine 0.1), and appends to them', async () => {
    const store = open(new SqliteSessionStore(file));
    const state = await finishedState();
    await store.save('chat-42', state, null);
    const next = state.withUserMessage('and now?');
    await store.save('chat-42', next, 1);
    const db = new Database(file);
    const rows = db.prepare('SELECT version, body FROM session_journal').all() as {
      version: number;
      body: Buffer;
    }[];
    const update = db.prepare('UPDATE session_journal SET body = ? WHERE version = ?');
    for (const row of rows) update.run(deflateRawSync(row.body, { level: 1 }), row.version);
    db.close();
    const reader = open(new SqliteSessionStore(file));
    const loaded = await reader.load('chat-42');
    expect(loaded?.version).toBe(2);
    expect(loaded?.state.toJSON()).toEqual(next.toJSON());
    const more = next.withUserMessage('more');
    await reader.save('chat-42', more, 2);
    const again = await open(new SqliteSessionStore(file)).load('chat-42');
    expect(again?.state.toJSON()).toEqual(more.toJSON());
  });

  it('refuses a crafted DEFLATE row that inflates far past its size, inflating no more than a small multiple of it (#44 item 9c)', async () => {
    const store = open(new SqliteSessionStore(file));
    await store.save('chat-42', await finishedState(), null);
    // 64 MiB of spaces deflated (about 64 KB): a DEFLATE bomb, made without holding its output
    const deflate = createDeflateRaw({ level: 9 });
    const parts: Buffer[] = [];
    deflate.on('data', (part: Buffer) => parts.push(part));
    const mib = Buffer.alloc(1 << 20, 0x20);
    for (let i = 0; i < 64; i++) if (!deflate.write(mib)) await once(deflate, 'drain');
    deflate.end();
    await once(deflate, 'end');
    const bomb = Buffer.concat(parts);
    expect(bomb.length).toBeLessThan(1 << 17);
    const db = new Database(file);
    db.prepare('UPDATE session_journal SET body = ?').run(bomb);
    db.close();
    const error = await open(new SqliteSessionStore(file))
      .load('chat-42')
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(error).toBeInstanceOf(CorruptSessionError);
    // refused by the inflate's output limit (not by the JSON of 64 MiB inflated in full), and that
    // limit is a small multiple of the row's size: a few MiB, not the gigabytes of the longest string
    expect((error as CorruptSessionError).cause).toMatchObject({ code: 'ERR_BUFFER_TOO_LARGE' });
    const limit = Number((error as CorruptSessionError).problem.match(/more than (\d+) bytes/)?.[1]);
    expect(limit).toBe(legacyInflateLimit(bomb.length));
    expect(limit).toBeLessThanOrEqual(Math.max(1 << 20, 128 * bomb.length));
  });

  it('inflates a legacy row up to 128 times its size (1 MiB at least)', () => {
    expect(legacyInflateLimit(100)).toBe(1 << 20);
    expect(legacyInflateLimit(400_000)).toBe(128 * 400_000);
  });

  it('creates its database with pages of 1 KiB, so a commit of a small record writes a few KiB (#50 item 3)', async () => {
    const store = open(new SqliteSessionStore(file));
    const state = await finishedState();
    await store.save('chat-42', state, null);
    await store.save('chat-42', state.withUserMessage('and now?'), 1);
    inspect((db) => expect(db.pragma('page_size', { simple: true })).toBe(1024));
  });

  it('round-trips records many times the size of its 1 KiB pages (a snapshot of 60 steps, then deltas)', async () => {
    const store = open(new SqliteSessionStore(file));
    let state = AgentState.empty().withSystemPrompt('s').withUserMessage('go').withExecutionStarted();
    for (let i = 0; i < 60; i++) state = appendStep(state, i);
    let version = await store.save('long', state, null);
    for (let i = 60; i < 63; i++) {
      state = appendStep(state, i);
      version = await store.save('long', state, version);
    }
    const sizes = inspect(
      (db) =>
        db.prepare('SELECT length(body) FROM session_journal ORDER BY version').pluck().all() as number[],
    );
    expect(sizes[0]).toBeGreaterThan(20 * 1024);
    const loaded = await open(new SqliteSessionStore(file)).load('long');
    expect(loaded?.version).toBe(4);
    expect(loaded?.state.toJSON()).toEqual(state.toJSON());
  });

  it('keeps the page size of a database made before (4 KiB), and loads and saves in it', async () => {
    const before = new Database(file);
    before.pragma('page_size = 4096');
    before.pragma('journal_mode = WAL');
    before.exec('CREATE TABLE other (x INTEGER)');
    before.close();
    const store = open(new SqliteSessionStore(file));
    const state = await finishedState();
    await store.save('chat-42', state, null);
    const next = state.withUserMessage('and now?');
    await store.save('chat-42', next, 1);
    const loaded = await open(new SqliteSessionStore(file)).load('chat-42');
    expect(loaded?.state.toJSON()).toEqual(next.toJSON());
    inspect((db) => expect(db.pragma('page_size', { simple: true })).toBe(4096));
  });

  it('does not create the database until it is used', async () => {
    const store = open(new SqliteSessionStore(file));
    await store.close();
    expect(() => inspect(() => undefined)).toThrow();
  });

  it('shares a database file with SqliteExecutionStore', async () => {
    const sessions = open(new SqliteSessionStore(file));
    const executions = open(new SqliteExecutionStore(file));
    const state = await finishedState();
    await sessions.save('chat', state, null);
    await executions.record(state);
    expect((await sessions.load('chat'))?.state.toJSON()).toEqual(state.toJSON());
    expect((await executions.getById(state.executionId() as string))?.stepCount).toBe(2);
    inspect((db) => {
      const tables = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .pluck()
        .all();
      expect(tables).toEqual(['executions', 'session_journal', 'sessions']);
    });
  });

  it('works on an in-memory database', async () => {
    const store = open(new SqliteSessionStore(':memory:'));
    expect(await store.save('s', AgentState.empty(), null)).toBe(1);
    expect((await store.load('s'))?.version).toBe(1);
  });

  it('refuses a database whose sessions table is someone else', async () => {
    const db = new Database(file);
    db.exec('CREATE TABLE sessions (id TEXT PRIMARY KEY, payload BLOB)');
    db.close();
    const store = open(new SqliteSessionStore(file));
    const error = await store.list().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SqliteSchemaError);
    expect(error).toMatchObject({ code: 'SQLITE_SCHEMA_MISMATCH', table: 'sessions' });
    expect((error as Error).message).toContain('missing version, saved_at, state_json');
  });

  it('creates the folder of the database file, as FileSessionStore does', async () => {
    const nested = join(dir, 'not-yet', 'deeper', 'agents.db');
    const store = open(new SqliteSessionStore(nested));
    expect(await store.save('s', AgentState.empty(), null)).toBe(1);
    expect((await open(new SqliteSessionStore(nested)).load('s'))?.version).toBe(1);
  });

  it('raises the open error to the caller and opens on a later call once the cause is gone', async () => {
    // A file where the database's folder should be.
    await writeFile(join(dir, 'blocker'), 'not a folder');
    const store = open(new SqliteSessionStore(join(dir, 'blocker', 'agents.db')));
    await expect(store.list()).rejects.toMatchObject({ code: expect.stringMatching(/^(EEXIST|ENOTDIR)$/) });
    await rm(join(dir, 'blocker'));
    expect(await store.save('s', AgentState.empty(), null)).toBe(1);
  });

  describe('a journal whose snapshot cannot be found is corrupt, never "no session"', () => {
    /** Versions 1 (the snapshot) to 3 of session 'run'. */
    async function threeVersions() {
      const store = open(new SqliteSessionStore(file));
      let state = AgentState.empty().withUserMessage('go').withExecutionStarted();
      let version = await store.save('run', state, null);
      for (let n = 0; n < 2; n++) {
        state = appendStep(state, n);
        version = await store.save('run', state, version);
      }
      return store;
    }
    const write = (sql: string) => {
      const db = new Database(file);
      try {
        // As a damaged page would hold it: constraints are checked on writes only.
        db.pragma('ignore_check_constraints = ON');
        db.exec(sql);
      } finally {
        db.close();
      }
    };

    it.each([
      ['the snapshot row is gone', 'DELETE FROM session_journal WHERE version = 1', 2],
      [
        'the snapshot row has a damaged kind',
        "UPDATE session_journal SET kind = 'snapshoT' WHERE version = 1",
        2,
      ],
      [
        'a delta row is marked a snapshot',
        "UPDATE session_journal SET kind = 'snapshot' WHERE version = 2",
        2,
      ],
      [
        'a row has another version than its record',
        'UPDATE session_journal SET version = 9 WHERE version = 3',
        9,
      ],
    ])('%s: load and loadCheckpoint raise CorruptSessionError', async (_, sql, checkpoint) => {
      await threeVersions();
      write(sql);
      const store = open(new SqliteSessionStore(file));
      const error = await store.load('run').catch((e: unknown) => e);
      expect(error).toBeInstanceOf(CorruptSessionError);
      expect(error).toMatchObject({ sessionId: 'run', location: `${file}#session_journal/run` });
      await expect(store.loadCheckpoint('run', checkpoint)).rejects.toBeInstanceOf(CorruptSessionError);
    });
  });

  it('checks the version in the same transaction across connections (two stores, one file)', async () => {
    const a = open(new SqliteSessionStore(file));
    const b = open(new SqliteSessionStore(file));
    await a.save('s', AgentState.empty(), null);
    expect(await b.save('s', AgentState.empty().withUserMessage('from b'), 1)).toBe(2);
    await expect(a.save('s', AgentState.empty(), 1)).rejects.toMatchObject({
      code: 'SESSION_CONFLICT',
      actualVersion: 2,
    });
    expect((await a.load('s'))?.state.messages()[0]?.content).toBe('from b');
  });
});

describe('loading better-sqlite3', () => {
  it('raises SqliteDriverMissingError, saying what to install, when the package is missing', async () => {
    const error = await loadSqliteDriver('better-sqlite3-not-installed').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(SqliteDriverMissingError);
    expect(error).toMatchObject({
      code: 'SQLITE_DRIVER_MISSING',
      moduleName: 'better-sqlite3-not-installed',
    });
    expect((error as Error).message).toContain('npm install better-sqlite3-not-installed');
    expect((error as Error).cause).toBeInstanceOf(Error);
    await expect(openSqliteDatabase(':memory:', 'better-sqlite3-not-installed')).rejects.toBeInstanceOf(
      SqliteDriverMissingError,
    );
  });

  it('loads the installed package once', async () => {
    const first = await loadSqliteDriver();
    expect(await loadSqliteDriver()).toBe(first);
    expect(first).toBe(Database);
  });
});
