import { readdir, stat } from 'node:fs/promises';
import { NotASessionStoreError, ReadOnlyStoreError } from './errors';
import { FileSessionStore } from './file-session-store';
import type { JournaledSessionStore } from './journal/checkpoint';
import { SqliteSessionStore } from './sqlite-session-store';

/**
 * Opens the session store at `path` only to read it (a replay, an upgrade check, a report): a
 * SqliteSessionStore file, or a FileSessionStore folder (`*.journal` files). Nothing at `path` is
 * created or changed: the SQLite file is opened read-only (no tables made, no switch to WAL);
 * saves, deletes and forks raise ReadOnlyStoreError. Anything else (a missing path, an empty file,
 * another application's database, a folder without journals) raises NotASessionStoreError, which
 * names why, before anything is read.
 *
 * @example
 * const store = await openStoreReadOnly('agents.db');
 * for (const id of await store.list()) console.log(id, (await store.load(id))?.state.status());
 * await store.close();
 */
export async function openStoreReadOnly(path: string): Promise<JournaledSessionStore> {
  const info = await stat(path).catch(() => null);
  if (!info) throw new NotASessionStoreError(path, 'no such file or folder');
  if (info.isDirectory()) {
    const names = await readdir(path);
    if (!names.some((name) => name.endsWith('.journal')))
      throw new NotASessionStoreError(path, 'the folder holds no session journals (*.journal)');
    return readOnly(new FileSessionStore(path), `FileSessionStore(${path})`);
  }
  if (info.size === 0) throw new NotASessionStoreError(path, 'the file is empty');
  const store = new SqliteSessionStore(path, { readOnly: true });
  try {
    await store.list();
  } catch (error) {
    await store.close();
    if (error instanceof NotASessionStoreError) throw new NotASessionStoreError(path, error.detail);
    throw new NotASessionStoreError(
      path,
      `it cannot be read as a SqliteSessionStore file: ${(error as Error).message}`,
      {
        cause: error,
      },
    );
  }
  return store;
}

/** The store's reads; its writes refused (a FileSessionStore writes nothing to load or list). */
function readOnly(store: JournaledSessionStore, name: string): JournaledSessionStore {
  const refuse = (operation: string) => Promise.reject(new ReadOnlyStoreError(name, operation));
  return {
    load: (id) => store.load(id),
    list: () => store.list(),
    checkpoints: (id) => store.checkpoints(id),
    loadCheckpoint: (id, version) => store.loadCheckpoint(id, version),
    close: () => store.close(),
    save: () => refuse('save'),
    delete: () => refuse('delete'),
    fork: () => refuse('fork'),
  };
}
