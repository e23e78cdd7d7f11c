import { existsSync, mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import type { Durability } from './durability';
import {
  NotASessionStoreError,
  SqliteDriverLoadError,
  SqliteDriverMissingError,
  SqliteSchemaError,
} from './errors';

/**
 * The part of better-sqlite3's API the stores use, declared here so that the package's types are
 * not needed by users who never touch SQLite.
 */
export interface SqliteStatement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}
export interface SqliteDatabase {
  readonly name: string;
  prepare(sql: string): SqliteStatement;
  exec(sql: string): unknown;
  pragma(sql: string, options?: { simple?: boolean }): unknown;
  transaction<A extends unknown[], R>(
    fn: (...args: A) => R,
  ): ((...args: A) => R) & { immediate(...args: A): R; deferred(...args: A): R };
  close(): unknown;
}
type SqliteConstructor = new (
  file: string | Buffer,
  options?: { timeout?: number; readonly?: boolean; fileMustExist?: boolean },
) => SqliteDatabase;

const SQLITE_MODULE = 'better-sqlite3';

const drivers = new Map<string, Promise<SqliteConstructor>>();

/**
 * Loads better-sqlite3 on first use, so that it stays an optional dependency: only users of the
 * SQLite stores install it. A missing package raises SqliteDriverMissingError (what to install);
 * a package that fails to load (a native build for another Node) raises SqliteDriverLoadError.
 * `moduleName` exists for the test of the missing case.
 */
export function loadSqliteDriver(moduleName: string = SQLITE_MODULE): Promise<SqliteConstructor> {
  let driver = drivers.get(moduleName);
  if (!driver) {
    driver = importDriver(moduleName);
    drivers.set(moduleName, driver);
    // A failed load is not cached: the user may install the package and try again.
    driver.catch(() => drivers.delete(moduleName));
  }
  return driver;
}

async function importDriver(moduleName: string): Promise<SqliteConstructor> {
  let loaded: unknown;
  try {
    // A variable specifier keeps bundlers from inlining the package or failing without it.
    loaded = await import(moduleName);
  } catch (error) {
    if (isMissing(error, moduleName)) throw new SqliteDriverMissingError(moduleName, { cause: error });
    throw new SqliteDriverLoadError(moduleName, (error as Error).message, { cause: error });
  }
  const ctor = (loaded as { default?: unknown }).default ?? loaded;
  if (typeof ctor !== 'function')
    throw new SqliteDriverLoadError(moduleName, 'it does not export a Database constructor');
  return ctor as SqliteConstructor;
}

function isMissing(error: unknown, moduleName: string): boolean {
  const { code, message } = (error ?? {}) as { code?: unknown; message?: unknown };
  // Only the package itself: a missing dependency of it is a broken install, not a missing driver.
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    typeof message === 'string' &&
    message.includes(`'${moduleName}'`)
  );
}

/**
 * The page size of a database the stores create. A commit writes every page it changes to the WAL
 * whole (and a checkpoint writes them again): with SQLite's default 4 KiB, a journal record of 2-3
 * KiB (a step's delta) cost 18.6 KiB written a save, as each row took a leaf page of its own; with
 * 1 KiB pages, 9.2 KiB (docs/performance.md, issue 50). Loads read the same rows, no slower.
 */
const PAGE_SIZE = 1024;

/**
 * Opens a database file for the stores (creating its folder if missing; a new one with pages of
 * PAGE_SIZE): WAL (readers do not block the writer, and other processes can use the file), and a
 * busy timeout for writers in other processes. Durability `'full'` (the default):
 * synchronous=FULL, a committed save survives a power loss, as the file store's fsync does; `'process'`: synchronous=NORMAL, a committed save survives
 * a crash of the process (it is in the WAL file when the commit returns) but the WAL is flushed to
 * disk only at its checkpoints, so a power loss can lose the last commits (never damage the database).
 */
export async function openSqliteDatabase(
  file: string,
  moduleName?: string,
  durability: Durability = 'full',
  readOnly = false,
): Promise<SqliteDatabase> {
  const Database = await loadSqliteDriver(moduleName);
  if (readOnly) return openReadOnly(Database, file);
  // Its folder is created as FileSessionStore creates its directory (SQLite itself does not);
  // synchronously, as the database is then opened.
  if (file !== ':memory:') mkdirSync(dirname(resolve(file)), { recursive: true });
  const db = new Database(file, { timeout: 5_000 });
  try {
    // Before the first table: a database made earlier keeps its page size (SQLite ignores this).
    db.pragma(`page_size = ${PAGE_SIZE}`);
    db.pragma('journal_mode = WAL');
    db.pragma(durability === 'full' ? 'synchronous = FULL' : 'synchronous = NORMAL');
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/**
 * A database file opened to be read only, leaving nothing beside it: read from a copy in memory,
 * unless a WAL file is there (a writer's commits not yet in the file: read through it, read-only;
 * its -wal and -shm files are the writer's). A WAL database opened read-only in place would leave
 * -wal and -shm files behind.
 */
async function openReadOnly(Database: SqliteConstructor, file: string): Promise<SqliteDatabase> {
  if (existsSync(`${file}-wal`))
    return new Database(file, { readonly: true, fileMustExist: true, timeout: 5_000 });
  const copy = await readFile(file);
  // a copy in memory has no WAL: its header's read and write versions (bytes 18, 19; 2 for WAL)
  // say rollback journal (1), as the file's would after `journal_mode = DELETE`
  if (copy.length >= 20 && copy[18] === 2 && copy[19] === 2) copy.fill(1, 18, 20);
  return new Database(copy, { readonly: true });
}

/**
 * Creates `table` if missing (unless `create` is false: a database opened read-only, where a missing
 * table is NotASessionStoreError), then checks that its columns are the expected ones.
 */
export function ensureTable(
  db: SqliteDatabase,
  table: string,
  columns: readonly string[],
  ddl: string,
  create = true,
): void {
  if (create) db.exec(ddl);
  const actual = (db.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name);
  if (actual.length === 0 && !create)
    throw new NotASessionStoreError(
      db.name,
      `it has no table "${table}" (not a file of this library's SQLite stores)`,
    );
  const missing = columns.filter((c) => !actual.includes(c));
  if (missing.length > 0)
    throw new SqliteSchemaError(
      db.name,
      table,
      `it has columns ${actual.join(', ')}; missing ${missing.join(', ')}`,
    );
}

/**
 * A statement prepared at its first use: a store prepares what all of its operations need when it
 * opens, and a fresh store that only loads would otherwise prepare a dozen statements it never runs
 * (a tenth of a 100-step load by a fresh SQLite store).
 */
export function lazyStatement(db: SqliteDatabase, sql: string): SqliteStatement {
  let prepared: SqliteStatement | undefined;
  const statement = () => {
    prepared ??= db.prepare(sql);
    return prepared;
  };
  return {
    run: (...params) => statement().run(...params),
    get: (...params) => statement().get(...params),
    all: (...params) => statement().all(...params),
  };
}
