/**
 * What a save's storage costs, lever by lever (issue 38), without the agent or the journal: 200
 * appends of a ~2.4 KiB record per cell, cells interleaved over rounds (LEVER_ROUNDS, default 7),
 * µs a save (wall and the process's CPU), median over rounds. Files:
 * - the lock file taken and released around every save (as `lockHoldMs: 0` does) or not at all
 *   (a lock kept across saves: one `stat` to check it, counted);
 * - the append by `fs/promises` (open, write, fsync, close, stat: each a trip to the thread pool)
 *   or by synchronous calls with only the fsync asynchronous (what the store does);
 * - with fsync, fdatasync (what the store does) or neither (durability 'full' / 'process').
 * SQLite (better-sqlite3, WAL, the store's table and index; one IMMEDIATE transaction per save
 * reading the newest version, then inserting): synchronous FULL / NORMAL / OFF, without the
 * snapshots' index, with 16 KiB pages. Then DEFLATE of a 3 KB record at level 6 and level 1.
 * Files and databases in os.tmpdir(): the figures depend on that disk.
 */
import {
  closeSync,
  fdatasync,
  fstatSync,
  fsync,
  mkdtempSync,
  openSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync } from 'node:zlib';
import Database from 'better-sqlite3';
import { releaseFileLock, takeFileLock } from '../src/persistence/file-lock';
import { median, now, printTable } from './harness';

const SAVES = 200;
const record = (i: number) => Buffer.from(`${i}:`.padEnd(2400, `abcdefghij${i}`));
const cpuMs = () => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};
const flushBy = (call: typeof fsync) => (fd: number) =>
  new Promise<void>((resolve, reject) => call(fd, (error) => (error ? reject(error) : resolve())));
const fsyncFd = flushBy(fsync);
const fdatasyncFd = flushBy(fdatasync);

type Save = (i: number, file: string) => Promise<void> | void;

async function appendByPromises(file: string, bytes: Buffer, sync: boolean, lockFile: string) {
  await stat(lockFile);
  const before = await stat(file).catch(() => null);
  const handle = await open(file, before ? 'r+' : 'w');
  try {
    await handle.write(bytes, 0, bytes.length, before?.size ?? 0);
    if (sync) await handle.sync();
  } finally {
    await handle.close();
  }
  await stat(file);
}

async function appendBySyncCalls(
  file: string,
  bytes: Buffer,
  sync: boolean,
  lockFile: string,
  flush = fdatasyncFd,
) {
  statSync(lockFile);
  const before = statSync(file, { throwIfNoEntry: false });
  const fd = openSync(file, before ? 'r+' : 'w');
  try {
    writeSync(fd, bytes, 0, bytes.length, before?.size ?? 0);
    if (sync) await flush(fd);
    fstatSync(fd);
  } finally {
    closeSync(fd);
  }
}

function fileCells(dir: string): [string, Save][] {
  const kept = join(dir, 'kept.lock');
  writeFileSync(kept, 'a lock kept across saves');
  const perSave =
    (append: typeof appendBySyncCalls, sync: boolean): Save =>
    async (i, file) => {
      const lock = await takeFileLock(file, 30_000);
      try {
        await append(file, record(i), sync, lock.lockFile);
      } finally {
        await releaseFileLock(lock);
      }
    };
  return [
    ['file: lock per save, promises, fsync (before)', perSave(appendByPromises, true)],
    ['file: lock kept, promises, fsync', (i, file) => appendByPromises(file, record(i), true, kept)],
    [
      'file: lock kept, sync calls, fsync',
      (i, file) => appendBySyncCalls(file, record(i), true, kept, fsyncFd),
    ],
    [
      'file: lock kept, sync calls, fdatasync (full)',
      (i, file) => appendBySyncCalls(file, record(i), true, kept),
    ],
    ['file: lock per save, promises, no fsync', perSave(appendByPromises, false)],
    ['file: lock kept, promises, no fsync', (i, file) => appendByPromises(file, record(i), false, kept)],
    [
      'file: lock kept, sync calls, no fsync (process)',
      (i, file) => appendBySyncCalls(file, record(i), false, kept),
    ],
  ];
}

function sqliteCell(dir: string, name: string, pragmas: string[], index: boolean): [string, Save] {
  const db = new Database(join(dir, `${name.replace(/\W+/g, '-')}.db`));
  for (const pragma of pragmas) db.pragma(pragma);
  db.exec(`CREATE TABLE IF NOT EXISTS session_journal (session_id TEXT NOT NULL, version INTEGER NOT NULL,
    gen TEXT NOT NULL, kind TEXT NOT NULL, step INTEGER NOT NULL, saved_at TEXT NOT NULL, body BLOB NOT NULL,
    PRIMARY KEY (session_id, version)) STRICT`);
  if (index)
    db.exec(
      `CREATE INDEX IF NOT EXISTS snapshots ON session_journal (session_id, version) WHERE kind = 'snapshot'`,
    );
  const newest = db.prepare(
    'SELECT version, gen FROM session_journal WHERE session_id = ? ORDER BY version DESC LIMIT 1',
  );
  const insert = db.prepare('INSERT INTO session_journal VALUES (?, ?, ?, ?, ?, ?, ?)');
  const append = db.transaction((id: string, version: number, body: Uint8Array) => {
    newest.get(id);
    insert.run(id, version, 'gen', 'delta', version, new Date().toISOString(), body);
  });
  // The store's body is the record's bytes (agent-machine 0.1 deflated them, see below).
  return [name, (i, file) => append.immediate(file, i + 1, record(i))];
}

export default async function bench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'agent-machine-levers-'));
  try {
    const cells: [string, Save][] = [
      ...fileCells(dir),
      sqliteCell(
        dir,
        'SQLite: WAL, synchronous FULL (full)',
        ['journal_mode = WAL', 'synchronous = FULL'],
        true,
      ),
      sqliteCell(
        dir,
        'SQLite: FULL, no snapshots index',
        ['journal_mode = WAL', 'synchronous = FULL'],
        false,
      ),
      sqliteCell(
        dir,
        'SQLite: FULL, 16 KiB pages',
        ['page_size = 16384', 'journal_mode = WAL', 'synchronous = FULL'],
        true,
      ),
      sqliteCell(
        dir,
        'SQLite: WAL, synchronous NORMAL (process)',
        ['journal_mode = WAL', 'synchronous = NORMAL'],
        true,
      ),
      sqliteCell(dir, 'SQLite: WAL, synchronous OFF', ['journal_mode = WAL', 'synchronous = OFF'], true),
    ];
    const rounds = Number(process.env.LEVER_ROUNDS ?? 7);
    const wall = new Map<string, number[]>(cells.map(([name]) => [name, []]));
    const cpu = new Map<string, number[]>(cells.map(([name]) => [name, []]));
    for (let r = -1; r < rounds; r++) {
      for (const [index, [name, save]] of cells.entries()) {
        const file = join(dir, `session-${index}-${r + 1}`);
        const [w, c] = [now(), cpuMs()];
        for (let i = 0; i < SAVES; i++) await save(i, file);
        if (r < 0) continue;
        wall.get(name)?.push(((now() - w) * 1000) / SAVES);
        cpu.get(name)?.push(((cpuMs() - c) * 1000) / SAVES);
      }
    }
    printTable(
      `Storage of a save, lever by lever (${SAVES} saves of a 2.4 KiB record, median of ${rounds} interleaved rounds; files in ${tmpdir()})`,
      cells.map(([name]) => ({
        cell: name,
        'µs a save': median(wall.get(name) ?? []),
        'CPU µs a save': median(cpu.get(name) ?? []),
      })),
    );
    const text = Buffer.from(
      JSON.stringify({ steps: Array.from({ length: 60 }, (_, i) => ({ i, t: `${i * 7919}` })) }),
    );
    const deflateRows = [6, 1].map((level) => {
      for (let i = 0; i < 200; i++) deflateRawSync(text, { level });
      const start = now();
      let size = 0;
      for (let i = 0; i < 2000; i++) size = deflateRawSync(text, { level }).length;
      return { level, 'µs a record': ((now() - start) * 1000) / 2000, bytes: size, of: text.length };
    });
    printTable("DEFLATE of a record (raw, the SQLite store's body in agent-machine 0.1)", deflateRows);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
