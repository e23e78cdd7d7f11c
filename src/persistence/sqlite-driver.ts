import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import type { Durability } from './durability';
import { SqliteDriverLoadError, SqliteDriverMissingError, SqliteSchemaError } from './errors';

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
  ): { immediate(...args: A): R; deferred(...args: A): R };
  close(): unknown;
}
type SqliteConstructor = new (file: string, options?: { timeout?: number }) => SqliteDatabase;

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
 * Opens a database file for the stores (creating its folder if missing): WAL (readers do not block
 * the writer, and other processes can use the file), and a busy timeout for writers in other
 * processes. Durability `'full'` (the default): synchronous=FULL, a committed save survives a power
 * loss, as the file store's fsync does; `'process'`: synchronous=NORMAL, a committed save survives
 * a crash of the process (it is in the WAL file when the commit returns) but the WAL is flushed to
 * disk only at its checkpoints, so a power loss can lose the last commits (never damage the database).
 */
export async function openSqliteDatabase(
  file: string,
  moduleName?: string,
  durability: Durability = 'full',
): Promise<SqliteDatabase> {
  const Database = await loadSqliteDriver(moduleName);
  // Its folder is created as FileSessionStore creates its directory (SQLite itself does not);
  // synchronously, as the database is then opened.
  if (file !== ':memory:') mkdirSync(dirname(resolve(file)), { recursive: true });
  const db = new Database(file, { timeout: 5_000 });
  try {
    db.pragma('journal_mode = WAL');
    db.pragma(durability === 'full' ? 'synchronous = FULL' : 'synchronous = NORMAL');
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}

/** Creates `table` if missing, then checks that its columns are the expected ones. */
export function ensureTable(
  db: SqliteDatabase,
  table: string,
  columns: readonly string[],
  ddl: string,
): void {
  db.exec(ddl);
  const actual = (db.pragma(`table_info(${table})`) as { name: string }[]).map((c) => c.name);
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
