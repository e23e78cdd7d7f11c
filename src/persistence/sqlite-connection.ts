import type { Durability } from './durability';
import { StoreClosedError } from './errors';
import { openSqliteDatabase, type SqliteDatabase } from './sqlite-driver';
import { assertStorePath } from './store-arguments';

/**
 * A database connection opened at first use (loading better-sqlite3 then), with what `prepare`
 * builds on it (tables, statements). Shared by the SQLite stores.
 */
export class LazySqliteConnection<T> {
  private opening: Promise<{ db: SqliteDatabase; prepared: T }> | null = null;
  private closed = false;

  constructor(
    readonly file: string,
    private readonly storeName: string,
    private readonly prepare: (db: SqliteDatabase) => T,
    private readonly durability: Durability = 'full',
    /** Opened read-only: the file must exist and is not changed (`prepare` must create nothing). */
    private readonly readOnly = false,
    /** Run by `close()` before the database closes (what the prepared parts still have to write). */
    private readonly finish?: (prepared: T) => Promise<void>,
  ) {
    assertStorePath(
      `${storeName}(file)`,
      file,
      'SQLite would open a temporary database, deleted at close; use ":memory:" for one in memory',
    );
  }

  /**
   * Runs `operation` on the prepared statements, opening the database on the first call. The
   * operation is admitted when `run` is called: one that was called before `close()` still runs,
   * in the same turn as the open completes, before close can close the database.
   */
  async run<R>(operation: (prepared: T) => R): Promise<R> {
    this.checkOpen();
    let opening = this.opening;
    if (!opening) {
      const started = this.open();
      opening = this.opening = started;
      // A failed open is not kept: the caller sees the error, and the next call tries again.
      started.catch(() => {
        if (this.opening === started) this.opening = null;
      });
    }
    const { prepared } = await opening;
    return operation(prepared);
  }

  /** Closes the database, after the operations admitted before (they are synchronous once open). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const opening = this.opening;
    this.opening = null;
    if (!opening) return;
    let opened: { db: SqliteDatabase; prepared: T };
    try {
      opened = await opening;
    } catch {
      // The open failed and its error went to the operation that started it; nothing to close.
      return;
    }
    try {
      await this.finish?.(opened.prepared);
    } finally {
      opened.db.close();
    }
  }

  private async open(): Promise<{ db: SqliteDatabase; prepared: T }> {
    const db = await openSqliteDatabase(this.file, undefined, this.durability, this.readOnly);
    try {
      return { db, prepared: this.prepare(db) };
    } catch (error) {
      db.close();
      throw error;
    }
  }

  private checkOpen(): void {
    if (this.closed) throw new StoreClosedError(`${this.storeName}(${this.file})`);
  }
}
