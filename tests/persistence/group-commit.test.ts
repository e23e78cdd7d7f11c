import { type FileHandle, open } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SessionConflictError } from '../../src/persistence/errors';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { AgentState } from '../../src/state/agent-state';
import { appendStep, tempDir } from './fixtures';

/**
 * Group commit (#50 item 1): with 'full' durability, the saves of sessions saving at the same
 * moment share one flush of the WAL file (fdatasync), each acknowledged only after a flush that
 * began once its record was committed. The flushes are counted by a spy on FileHandle's datasync;
 * at each flush's start, a second connection reads which records are committed (the flush covers
 * those), so that a save resolved before a flush covering its record is caught.
 */

let dir: string;
let remove: () => Promise<void>;
let file: string;
/** Opened once the store made its table (after the first save's flush). */
let reader: Database.Database | undefined;
/** `session:version` of the records a finished flush covered. */
let durable: Set<string>;
let flushes: number;
/** While set, a flush waits for it before it starts. */
let gate: Promise<void> | null;
let flushStarted: () => void;

async function fileHandlePrototype(): Promise<FileHandle> {
  const handle = await open(fileURLToPath(import.meta.url), 'r');
  await handle.close();
  return Object.getPrototypeOf(handle) as FileHandle;
}

beforeEach(async () => {
  ({ dir, remove } = await tempDir());
  file = join(dir, 'sessions.db');
  durable = new Set();
  reader = undefined;
  flushes = 0;
  gate = null;
  flushStarted = () => {};
  const prototype = await fileHandlePrototype();
  const datasync = prototype.datasync;
  vi.spyOn(prototype, 'datasync').mockImplementation(async function (this: FileHandle) {
    flushStarted();
    if (gate) await gate;
    const covered = (
      (reader?.prepare('SELECT session_id, version FROM session_journal').all() as {
        session_id: string;
        version: number;
      }[]) ?? []
    ).map((r) => `${r.session_id}:${r.version}`);
    await datasync.call(this);
    flushes++;
    for (const key of covered) durable.add(key);
  });
});

afterEach(async () => {
  vi.restoreAllMocks();
  reader?.close();
  await remove();
});

/** Opens the store and the reading connection (after the store made the table). */
async function openStore(): Promise<SqliteSessionStore> {
  const store = new SqliteSessionStore(file);
  await store.save('seed', state(0), null);
  reader = new Database(file, { readonly: true });
  return store;
}

function state(steps: number): AgentState {
  let s = AgentState.empty().withUserMessage('go').withExecutionStarted();
  for (let i = 0; i < steps; i++) s = appendStep(s, i);
  return s;
}

/** A save that records whether its record was on disk when it resolved. */
function checkedSave(
  store: SqliteSessionStore,
  id: string,
  steps: number,
  expected: number | null,
  early: string[],
): Promise<number> {
  return store.save(id, state(steps), expected).then((version) => {
    if (!durable.has(`${id}:${version}`)) early.push(`${id}:${version}`);
    return version;
  });
}

const ids = Array.from({ length: 100 }, (_, i) => `s${i}`);

describe("SqliteSessionStore group commit ('full' durability)", () => {
  it('100 concurrent saves share fewer flushes than saves, each resolved only after a flush covering its record', async () => {
    const store = await openStore();
    const before = flushes;
    const early: string[] = [];
    const first = await Promise.all(ids.map((id) => checkedSave(store, id, 1, null, early)));
    const second = await Promise.all(ids.map((id, i) => checkedSave(store, id, 2, first[i] ?? 0, early)));
    expect(first).toEqual(ids.map(() => 1));
    expect(second).toEqual(ids.map(() => 2));
    expect(early).toEqual([]);
    const used = flushes - before;
    expect(used).toBeGreaterThan(0);
    expect(used).toBeLessThan(2 * ids.length);
    await store.close();
    const fresh = new SqliteSessionStore(file);
    for (const id of ids) expect((await fresh.load(id))?.version).toBe(2);
    await fresh.close();
  });

  it('saves that come while a flush is in flight are written together and flushed once; a conflicting one fails alone', async () => {
    const store = await openStore();
    await Promise.all(ids.map((id) => store.save(id, state(1), null)));
    let open!: () => void;
    gate = new Promise((resolve) => {
      open = resolve;
    });
    const started = new Promise<void>((resolve) => {
      flushStarted = resolve;
    });
    const before = flushes;
    const early: string[] = [];
    // s0 leads: written and flushed at once; its flush is held, so the others queue behind it.
    const leader = checkedSave(store, 's0', 2, 1, early);
    await started;
    const followers = ids
      .slice(1)
      .map((id) =>
        checkedSave(store, id, 2, id === 's50' ? null : 1, early).catch((error: unknown) => error),
      );
    let settled = 0;
    for (const follower of [leader, ...followers]) void follower.then(() => settled++);
    // While the leader's flush is held, none is acknowledged (nor even written: they queue).
    for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(0);
    expect(reader?.prepare('SELECT count(*) AS n FROM session_journal WHERE version = 2').get()).toEqual({
      n: 1,
    });
    gate = null;
    open();
    expect(await leader).toBe(2);
    const outcomes = await Promise.all(followers);
    expect(outcomes.filter((o) => o === 2)).toHaveLength(98);
    expect(outcomes[49]).toBeInstanceOf(SessionConflictError);
    expect((outcomes[49] as SessionConflictError).code).toBe('SESSION_CONFLICT');
    expect(early).toEqual([]);
    // One flush for the leader, one for the 98 written while it was in flight.
    expect(flushes - before).toBe(2);
    await store.close();
    const fresh = new SqliteSessionStore(file);
    expect((await fresh.load('s50'))?.version).toBe(1);
    expect((await fresh.load('s99'))?.version).toBe(2);
    await fresh.close();
  });

  it('a session saving alone is flushed at once, one flush per save', async () => {
    const store = await openStore();
    const before = flushes;
    const early: string[] = [];
    let version: number | null = null;
    for (let step = 1; step <= 5; step++) version = await checkedSave(store, 'alone', step, version, early);
    expect(version).toBe(5);
    expect(early).toEqual([]);
    expect(flushes - before).toBe(5);
    await store.close();
  });

  it('close() waits for the saves queued behind a flush, which then load from a fresh store', async () => {
    const store = await openStore();
    let open!: () => void;
    gate = new Promise((resolve) => {
      open = resolve;
    });
    const started = new Promise<void>((resolve) => {
      flushStarted = resolve;
    });
    const saves = [store.save('a', state(1), null)];
    await started;
    saves.push(store.save('b', state(1), null), store.save('c', state(1), null));
    const closed = store.close();
    gate = null;
    open();
    expect(await Promise.all(saves)).toEqual([1, 1, 1]);
    await closed;
    const fresh = new SqliteSessionStore(file);
    for (const id of ['a', 'b', 'c']) expect((await fresh.load(id))?.version).toBe(1);
    await fresh.close();
  });

  it('a flush that fails rejects the saves it covered with its error; the next save flushes again', async () => {
    const store = await openStore();
    let fail = true;
    const failure = Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' });
    gate = Promise.resolve().then(() => {
      if (fail) {
        fail = false;
        throw failure;
      }
    });
    await expect(store.save('a', state(1), null)).rejects.toBe(failure);
    gate = null;
    // The record was committed (its flush failed): the caller learns the version by loading.
    expect((await store.load('a'))?.version).toBe(1);
    const before = flushes;
    expect(await checkedSave(store, 'a', 2, 1, [])).toBe(2);
    expect(flushes - before).toBe(1);
    await store.close();
  });

  it('a delete and a fork are flushed before they resolve too', async () => {
    const store = await openStore();
    await store.save('origin', state(2), null);
    const before = flushes;
    await store.fork('origin', 1, 'copy');
    expect(durable.has('copy:1')).toBe(true);
    await store.delete('origin');
    expect(flushes - before).toBe(2);
    await store.close();
  });
});
