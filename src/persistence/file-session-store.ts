import { copyFile, mkdir, readdir, realpath } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { AgentState } from '../state/agent-state';
import { InvalidArgumentError } from '../state/errors';
import { syncDirectory, writeFileAtomic } from './atomic-file';
import { type Durability, durabilityOption } from './durability';
import {
  CheckpointNotFoundError,
  CorruptSessionError,
  SessionConflictError,
  SessionNotFoundError,
  StoreClosedError,
} from './errors';
import type { Checkpoint, JournaledSessionStore } from './journal/checkpoint';
import { frame, unframe } from './journal/frame';
import {
  assertVersion,
  checkpointsOf,
  forkRecords,
  lastGen,
  lastVersion,
  replayRecords,
} from './journal/journal-log';
import { type JournalTip, nextRecord } from './journal/journal-writer';
import { decodeSessionDocument, type StoredAt, savedAtOf } from './session-document';
import {
  appendAt,
  type FileStamp,
  isNotFound,
  readIfPresent,
  sameStamp,
  stampNow,
  stampOf,
  unlinkIfPresent,
} from './session-file';
import { assertSessionId, isValidSessionId } from './session-id';
import { SessionLocks } from './session-locks';
import type { LoadedSession } from './session-store';
import { assertExpectedVersion, assertState, assertStorePath } from './store-arguments';

const EXTENSION = '.journal';
/** The file of a session saved before the journal; read as it is, replaced at its next save. */
const LEGACY_EXTENSION = '.json';

/** How long a save waits for another process's lock on its session by default. */
const DEFAULT_LOCK_TIMEOUT_MS = 30_000;
/** How long a session's lock is kept after a save by default (session-locks.ts). */
const DEFAULT_LOCK_HOLD_MS = 50;

// One lock per file for the whole process, so two stores on the same directory serialize too,
// keyed by the file's real path: stores reaching one directory through a symlink share it.
const sessionLocks = new SessionLocks();

/**
 * What a store knows of a session file it wrote or read last: the tip, and the file's identity
 * then. A file with another inode, size or modification time was written by someone else (or
 * replaced): it is read again before the next append.
 */
interface KnownFile {
  readonly tip: JournalTip;
  readonly stamp: FileStamp;
}

/**
 * A SessionStore with one append-only journal file per session, `<dir>/<sessionId>.journal`
 * (JOURNAL_FORMAT.md): each save appends one record holding what changed since the previous one,
 * framed with its length and a CRC-32, and flushes it to disk (fdatasync). A crash in the middle of an
 * append leaves a torn last record, which loads ignore and the next save cuts off; the first
 * record is written atomically (temporary file, fsync, rename), so a session exists whole or not
 * at all. A save holds the session's lock, in this process and across the processes of this
 * machine (the file `<sessionId>.journal.lock` while it runs), so the version check and the append
 * are atomic: of two processes saving the same version, one gets SessionConflictError. A lock left
 * by a process that is gone is taken over. The lock is kept `lockHoldMs` after a save, so the saves
 * of a busy session take it once. `durability: 'process'` skips the flushes (durability.ts). Sessions saved before the journal
 * (`<sessionId>.json`) load as they are and move to the journal at their next save.
 *
 * @example
 * const store = new FileSessionStore('./sessions');
 * const version = await store.save('chat-42', state, null);   // writes ./sessions/chat-42.journal
 * const { state: again } = (await store.load('chat-42'))!;
 */
export class FileSessionStore implements JournaledSessionStore {
  /** The directory, absolute. */
  readonly dir: string;
  private created: Promise<unknown> | null = null;
  private realDir: string | null = null;
  private closed = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly known = new Map<string, KnownFile>();

  private readonly lockTimeoutMs: number;
  private readonly lockHoldMs: number;
  /** What an acknowledged save survives (durability.ts). */
  readonly durability: Durability;
  private readonly sync: boolean;

  /**
   * @param dir the directory of the session files; created at the first save if missing.
   * @param options.lockTimeoutMs how long a save (delete, fork) waits for another process's lock
   *   on the session before it raises SessionFileLockedError (default 30 s).
   * @param options.lockHoldMs how long the session's lock is kept after a save, so that the next
   *   save of the session in this process takes none (default 50 ms; 0: released at once). Another
   *   process's save waits up to that long; `close()` releases the locks kept.
   * @param options.durability `'full'` (default: each save is flushed to disk before it is
   *   acknowledged) or `'process'` (no flush: an acknowledged save survives a crash of the process,
   *   not a power loss or OS crash).
   */
  constructor(
    dir: string,
    options: { lockTimeoutMs?: number; lockHoldMs?: number; durability?: Durability } = {},
  ) {
    this.dir = resolve(assertStorePath('FileSessionStore(dir)', dir, "use '.' for the current directory"));
    this.lockTimeoutMs = millisecondsOption('lockTimeoutMs', options.lockTimeoutMs, DEFAULT_LOCK_TIMEOUT_MS);
    this.lockHoldMs = millisecondsOption('lockHoldMs', options.lockHoldMs, DEFAULT_LOCK_HOLD_MS);
    this.durability = durabilityOption(options.durability);
    this.sync = this.durability === 'full';
  }

  /** The journal file of a session (whether or not it exists). */
  fileOf(sessionId: string): string {
    return join(this.dir, `${assertSessionId(sessionId)}${EXTENSION}`);
  }

  load(sessionId: string): Promise<LoadedSession | null> {
    return this.track(async () => {
      // Forgotten first: after a load that fails, the next save writes the whole state again.
      this.known.delete(sessionId);
      const stored = await this.read(sessionId);
      if (stored === null) return null;
      if (stored.kind === 'legacy') return stored.loaded;
      const replayed = replayRecords(stored.texts, stored.at);
      // A torn tail is cut off by the next save, which then needs the intact length: only a file
      // without one is remembered as it is.
      if (stored.end === stored.stamp.size)
        this.known.set(sessionId, { tip: replayed.tip, stamp: stored.stamp });
      return { state: replayed.state, version: replayed.version };
    });
  }

  save(sessionId: string, state: AgentState, expectedVersion: number | null): Promise<number> {
    return this.track(async () => {
      const file = this.fileOf(sessionId);
      assertState(state);
      assertExpectedVersion(expectedVersion);
      await this.ensureDir();
      return this.locked(file, async () => {
        const known = this.known.get(sessionId);
        const stamp = stampNow(file);
        const size = stamp?.size ?? null;
        let actual: number | null;
        let tip: JournalTip | null = null;
        let end = size ?? 0;
        let legacy = false;
        if (known && stamp && sameStamp(stamp, known.stamp)) {
          actual = known.tip.version;
          tip = known.tip;
        } else {
          const stored = await this.read(sessionId);
          actual =
            stored?.kind === 'journal'
              ? lastVersion(stored.texts, stored.at)
              : (stored?.loaded.version ?? null);
          legacy = stored?.kind === 'legacy';
          if (stored?.kind === 'journal') {
            end = stored.end;
            const gen = lastGen(stored.texts, stored.at);
            tip = known && known.tip.version === actual && known.tip.gen === gen ? known.tip : null;
          }
        }
        if (actual !== expectedVersion) throw new SessionConflictError(sessionId, expectedVersion, actual);
        const version = (actual ?? 0) + 1;
        const next = nextRecord(tip, state, version);
        const bytes = frame(next.text);
        let written: FileStamp | null;
        if (size === null || legacy) {
          await this.ensureDir();
          await writeFileAtomic(file, bytes, { sync: this.sync });
          if (legacy) await this.removeLegacy(sessionId);
          written = await stampOf(file);
        } else {
          written = await appendAt(file, end, size, bytes, this.sync);
        }
        if (written) this.known.set(sessionId, { tip: next.commit(), stamp: written });
        return version;
      });
    });
  }

  checkpoints(sessionId: string): Promise<Checkpoint[]> {
    return this.track(async () => {
      const stored = await this.read(sessionId);
      if (stored === null) return [];
      if (stored.kind === 'journal') return checkpointsOf(stored.texts, stored.at);
      const { state, version } = stored.loaded;
      return [{ version, stepNumber: state.stepCount(), savedAt: stored.savedAt }];
    });
  }

  loadCheckpoint(sessionId: string, version: number): Promise<LoadedSession | null> {
    return this.track(async () => {
      assertVersion(version);
      const stored = await this.read(sessionId);
      if (stored === null) return null;
      if (stored.kind === 'legacy') {
        if (stored.loaded.version === version) return stored.loaded;
        throw new CheckpointNotFoundError(sessionId, version);
      }
      return { state: replayRecords(stored.texts, stored.at, version).state, version };
    });
  }

  fork(sessionId: string, version: number, newSessionId: string): Promise<LoadedSession> {
    return this.track(async () => {
      assertVersion(version);
      const target = this.fileOf(newSessionId);
      return this.locked(target, async () => {
        const stored = await this.read(sessionId);
        if (stored === null) throw new SessionNotFoundError(sessionId);
        const existing = await this.read(newSessionId);
        if (existing !== null) {
          const actual =
            existing.kind === 'journal' ? lastVersion(existing.texts, existing.at) : existing.loaded.version;
          throw new SessionConflictError(newSessionId, null, actual);
        }
        if (stored.kind === 'legacy') {
          if (stored.loaded.version !== version) throw new CheckpointNotFoundError(sessionId, version);
          await copyFile(this.legacyFileOf(sessionId), `${this.legacyFileOf(newSessionId)}`);
          if (this.sync) await syncDirectory(this.dir);
          return stored.loaded;
        }
        const state = replayRecords(stored.texts, stored.at, version).state;
        const { texts } = forkRecords(stored.texts, version, stored.at);
        await writeFileAtomic(target, Buffer.concat(texts.map(frame)), { sync: this.sync });
        return { state, version };
      });
    });
  }

  delete(sessionId: string): Promise<void> {
    return this.track(async () => {
      const file = this.fileOf(sessionId);
      // Without the directory there is nothing to delete (and no place for a lock file).
      if ((await stampOf(this.dir)) === null) {
        this.known.delete(sessionId);
        return;
      }
      await this.locked(file, async () => {
        this.known.delete(sessionId);
        const journal = await unlinkIfPresent(file);
        const legacy = await unlinkIfPresent(this.legacyFileOf(sessionId));
        if ((journal || legacy) && this.sync) await syncDirectory(this.dir);
      });
    });
  }

  list(): Promise<string[]> {
    return this.track(async () => {
      let entries: { name: string; isFile(): boolean }[];
      try {
        entries = await readdir(this.dir, { withFileTypes: true });
      } catch (error) {
        if (isNotFound(error)) return [];
        throw error;
      }
      // Temporary files of an interrupted write end in `.tmp`, so they never match.
      const ids = new Set<string>();
      for (const entry of entries) {
        if (!entry.isFile()) continue;
        for (const extension of [EXTENSION, LEGACY_EXTENSION])
          if (entry.name.endsWith(extension)) ids.add(entry.name.slice(0, -extension.length));
      }
      return [...ids].filter(isValidSessionId).sort();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    this.known.clear();
    // Each operation's outcome goes to its own caller; close only waits for them to end.
    await Promise.allSettled([...this.inFlight]);
    // The locks kept of this directory's sessions (another store's on it takes them again).
    await sessionLocks.releaseIn(this.realDir ? [this.dir, this.realDir] : [this.dir]);
  }

  /**
   * Runs `task` holding the lock of `file`: in this process (saves queue without touching the disk),
   * then across processes (the lock file `<file>.lock`, file-lock.ts), kept a while after
   * (session-locks.ts).
   */
  private async locked<T>(file: string, task: () => Promise<T>): Promise<T> {
    return sessionLocks.run(await this.lockKey(file), file, task, {
      timeoutMs: this.lockTimeoutMs,
      holdMs: this.lockHoldMs,
    });
  }

  /** The lock of `file`: its path in the directory's real path (the directory as written if it does not exist). */
  private async lockKey(file: string): Promise<string> {
    if (!this.realDir) {
      try {
        this.realDir = await realpath(this.dir);
      } catch (error) {
        if (isNotFound(error)) return file;
        throw error;
      }
    }
    return join(this.realDir, basename(file));
  }

  private legacyFileOf(sessionId: string): string {
    return join(this.dir, `${assertSessionId(sessionId)}${LEGACY_EXTENSION}`);
  }

  /** The session as stored: the journal's intact records, or a document from before the journal. */
  private async read(sessionId: string): Promise<StoredFile | null> {
    const file = this.fileOf(sessionId);
    const read = await readIfPresent(file);
    if (read !== null) {
      const at = { sessionId, location: file };
      const { texts, end, damagedAt } = unframe(read.bytes);
      if (damagedAt !== null)
        throw new CorruptSessionError(
          sessionId,
          `the journal is damaged at byte ${damagedAt}: the record there fails its check and intact ` +
            'records follow it (a crash only ever cuts off the last record)',
          file,
        );
      if (texts.length === 0)
        throw new CorruptSessionError(sessionId, 'the file holds no intact journal record', file);
      return { kind: 'journal', texts, end, stamp: read.stamp, at };
    }
    const legacyFile = this.legacyFileOf(sessionId);
    const legacy = await readIfPresent(legacyFile);
    if (legacy === null) return null;
    const at = { sessionId, location: legacyFile };
    const text = decodeUtf8(legacy.bytes, at);
    const loaded = decodeSessionDocument(text, at);
    return {
      kind: 'legacy',
      loaded,
      savedAt: savedAtOf(text),
      at,
    };
  }

  private async removeLegacy(sessionId: string): Promise<void> {
    await unlinkIfPresent(this.legacyFileOf(sessionId));
    if (this.sync) await syncDirectory(this.dir);
  }

  private ensureDir(): Promise<unknown> {
    if (!this.created) {
      this.created = mkdir(this.dir, { recursive: true }).catch((error: unknown) => {
        this.created = null; // let a later save try again
        throw error;
      });
    }
    return this.created;
  }

  private track<T>(operation: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new StoreClosedError(`FileSessionStore(${this.dir})`));
    const promise = operation();
    this.inFlight.add(promise);
    const done = () => this.inFlight.delete(promise);
    promise.then(done, done);
    return promise;
  }
}

function millisecondsOption(name: string, value: unknown, fallback: number): number {
  const ms = value ?? fallback;
  if (typeof ms !== 'number' || !(ms >= 0))
    throw new InvalidArgumentError(`options.${name}`, `${String(ms)} is not a number of milliseconds >= 0`);
  return ms;
}

type StoredFile =
  | { kind: 'journal'; texts: string[]; end: number; stamp: FileStamp; at: StoredAt }
  | { kind: 'legacy'; loaded: LoadedSession; savedAt: Date; at: StoredAt };

const utf8 = new TextDecoder('utf-8', { fatal: true });

function decodeUtf8(bytes: Uint8Array, at: StoredAt): string {
  try {
    return utf8.decode(bytes);
  } catch (error) {
    throw new CorruptSessionError(at.sessionId, 'the file is not UTF-8 text', at.location, null, {
      cause: error,
    });
  }
}
