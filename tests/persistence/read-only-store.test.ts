import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { NotASessionStoreError, ReadOnlyStoreError } from '../../src/persistence/errors';
import { FileSessionStore } from '../../src/persistence/file-session-store';
import { openStoreReadOnly } from '../../src/persistence/read-only-store';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { AgentState } from '../../src/state/agent-state';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'read-only-store-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Every file of a folder with its digest: what opening it read-only must leave as it was. */
const snapshot = (dir: string): Record<string, unknown> =>
  Object.fromEntries(
    readdirSync(dir, { withFileTypes: true }).map((entry) => {
      const path = join(dir, entry.name);
      return [
        entry.name,
        entry.isDirectory() ? snapshot(path) : createHash('sha256').update(readFileSync(path)).digest('hex'),
      ];
    }),
  );

const question = (text: string) => AgentState.empty().withUserMessage(text);

describe('openStoreReadOnly', () => {
  it('reads a SqliteSessionStore file, refuses writes, and leaves the folder as it was (no -wal, no -shm)', async () => {
    const dir = tempDir();
    const file = join(dir, 'sessions.db');
    const writer = new SqliteSessionStore(file);
    await writer.save('a', question('one'), null);
    await writer.close();
    const before = snapshot(dir);
    const store = await openStoreReadOnly(file);
    expect(await store.list()).toEqual(['a']);
    expect((await store.load('a'))?.state.messages()[0]?.content).toBe('one');
    await expect(store.save('b', question('two'), null)).rejects.toBeInstanceOf(ReadOnlyStoreError);
    await expect(store.delete('a')).rejects.toMatchObject({ code: 'STORE_READ_ONLY' });
    await store.close();
    expect(snapshot(dir)).toEqual(before);
  });

  it("reads what a writer still open has committed (through its WAL file, the writer's)", async () => {
    const file = join(tempDir(), 'sessions.db');
    const writer = new SqliteSessionStore(file);
    await writer.save('a', question('one'), null);
    const store = await openStoreReadOnly(file);
    expect((await store.load('a'))?.version).toBe(1);
    await store.close();
    await writer.close();
  });

  it('reads a FileSessionStore folder and refuses writes, changing nothing', async () => {
    const dir = tempDir();
    const writer = new FileSessionStore(dir);
    await writer.save('a', question('one'), null);
    await writer.close();
    const before = snapshot(dir);
    const store = await openStoreReadOnly(dir);
    expect(await store.list()).toEqual(['a']);
    await expect(store.save('a', question('two'), 1)).rejects.toBeInstanceOf(ReadOnlyStoreError);
    await expect(store.fork('a', 1, 'b')).rejects.toBeInstanceOf(ReadOnlyStoreError);
    await store.close();
    expect(snapshot(dir)).toEqual(before);
  });

  it('refuses what is not a session store, saying why, and changes nothing', async () => {
    const dir = tempDir();
    const empty = join(dir, 'empty.db');
    writeFileSync(empty, '');
    const other = join(dir, 'app.db');
    const Database = createRequire(import.meta.url)('better-sqlite3');
    const db = new Database(other);
    db.exec('CREATE TABLE users (id INTEGER PRIMARY KEY)');
    db.close();
    const text = join(dir, 'notes.txt');
    writeFileSync(text, 'not a database at all, but long enough to have a header and more');
    const folder = join(dir, 'folder');
    mkdirSync(folder);
    const before = snapshot(dir);
    const refused = async (path: string) => {
      const error = await openStoreReadOnly(path).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(NotASessionStoreError);
      return (error as NotASessionStoreError).detail;
    };
    expect(await refused(join(dir, 'missing.db'))).toBe('no such file or folder');
    expect(await refused(empty)).toBe('the file is empty');
    expect(await refused(other)).toMatch(/has no table "sessions"/);
    expect(await refused(text)).toMatch(/cannot be read as a SqliteSessionStore file/);
    expect(await refused(folder)).toMatch(/no session journals/);
    expect(snapshot(dir)).toEqual(before);
  });
});

describe('SqliteSessionStore with readOnly', () => {
  it('refuses a save with ReadOnlyStoreError before touching the file', async () => {
    const dir = tempDir();
    const file = join(dir, 'sessions.db');
    const writer = new SqliteSessionStore(file);
    await writer.save('a', question('one'), null);
    await writer.close();
    const before = snapshot(dir);
    const store = new SqliteSessionStore(file, { readOnly: true });
    expect(store.readOnly).toBe(true);
    await expect(store.save('a', question('two'), 1)).rejects.toMatchObject({ code: 'STORE_READ_ONLY' });
    expect((await store.load('a'))?.version).toBe(1);
    await store.close();
    expect(snapshot(dir)).toEqual(before);
  });
});
