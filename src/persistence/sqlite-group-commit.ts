import { type FileHandle, open } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { syncDirectory } from './atomic-file';
import { GroupCommit, type Written } from './group-commit';
import type { SqliteDatabase } from './sqlite-driver';

/**
 * Group commit for a SQLite store with `'full'` durability (group-commit.ts): the saves that come
 * while a flush is in flight are written in one transaction (each in a savepoint of its own, so
 * that one that fails, a version conflict, fails alone) and flushed to disk together.
 *
 * How: the connection commits with `synchronous = NORMAL` (the commit writes its WAL frames, no
 * flush), and the store flushes the WAL file itself (fdatasync) before it acknowledges the saves
 * of the transaction. What is acknowledged is on the disk, as with `synchronous = FULL`; a flush
 * waits on a thread of the pool instead of blocking the event loop, so the sessions go on
 * computing while their records reach the disk. As with the file store, a commit is visible to
 * readers (other connections) from its write, before its flush ends. A power loss loses at most
 * commits not yet acknowledged, and never damages the database (WAL with NORMAL keeps it sound).
 *
 * Null for a database whose journal is not a WAL file (`:memory:`, a file system without shared
 * memory): there the connection keeps `synchronous = FULL` and each save commits alone.
 */
export function sqliteGroupCommit(db: SqliteDatabase): SqliteGroupCommit | null {
  if (db.name === ':memory:' || db.pragma('journal_mode', { simple: true }) !== 'wal') return null;
  db.pragma('synchronous = NORMAL');
  const wal = new WalFlush(`${resolve(db.name)}-wal`);
  // Called inside the batch's transaction, a transaction function runs in a savepoint of its own.
  const member = db.transaction((write: () => unknown) => write());
  const batch = db.transaction((writes: readonly (() => unknown)[]) =>
    writes.map((write): Written<unknown> => {
      try {
        return { ok: true, value: member(write) };
      } catch (error) {
        return { ok: false, error };
      }
    }),
  );
  const commit = new GroupCommit<() => unknown, unknown>(
    (writes) => batch.immediate(writes),
    () => wal.flush(),
  );
  return {
    run: <R>(write: () => R) => commit.submit(write) as Promise<R>,
    async finish() {
      await commit.idle();
      await wal.close();
    },
  };
}

/** A database's group commit: what a store writes through it is acknowledged once on disk. */
export interface SqliteGroupCommit {
  /**
   * Runs `write` (synchronous statements) in a batch's transaction, in a savepoint: an error it
   * throws rolls back its own statements and rejects its own promise. Resolves with its result
   * once the batch is flushed to disk.
   */
  run<R>(write: () => R): Promise<R>;
  /** Waits for the writes admitted to be flushed, and closes the WAL file (before the database). */
  finish(): Promise<void>;
}

/**
 * The WAL file of an open database, flushed to disk. Its handle is kept: SQLite removes or replaces
 * a WAL file only when the last connection to the database closes, and the store's is open until
 * `close()`, which closes this first.
 */
class WalFlush {
  private handle: FileHandle | null = null;

  constructor(private readonly file: string) {}

  async flush(): Promise<void> {
    if (!this.handle) {
      const handle = await open(this.file, 'r');
      // The first flush also flushes the folder: the WAL file may be new, its entry not yet on disk.
      try {
        await syncDirectory(dirname(this.file));
      } catch (error) {
        await closeAfter(handle, error);
      }
      this.handle = handle;
    }
    const handle = this.handle;
    try {
      await handle.datasync();
    } catch (error) {
      // Opened again at the next flush.
      this.handle = null;
      await closeAfter(handle, error);
    }
  }

  async close(): Promise<void> {
    const handle = this.handle;
    this.handle = null;
    await handle?.close();
  }
}

/** Closes `handle` after `error`, and throws `error` (with the close's error too, if it fails). */
async function closeAfter(handle: FileHandle, error: unknown): Promise<never> {
  try {
    await handle.close();
  } catch (closeError) {
    throw new AggregateError(
      [error, closeError],
      `Flushing the WAL failed, and so did closing it: ${(error as Error).message}; ${(closeError as Error).message}`,
    );
  }
  throw error;
}
