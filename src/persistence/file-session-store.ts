import { type FileHandle, mkdir, open, readdir, readFile, realpath, unlink } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import type { AgentState } from '../state/agent-state';
import { syncDirectory, writeFileAtomic } from './atomic-file';
import { CorruptSessionError, SessionConflictError, StoreClosedError } from './errors';
import { KeyedLock } from './keyed-lock';
import {
  DOCUMENT_HEAD_BYTES,
  decodeSessionDocument,
  encodeSessionDocument,
  type StoredAt,
  storedVersion,
  versionFromHead,
} from './session-document';
import { assertSessionId, isValidSessionId } from './session-id';
import type { LoadedSession, SessionStore } from './session-store';
import { assertExpectedVersion, assertState } from './store-arguments';

const EXTENSION = '.json';

// One lock per file for the whole process, so two stores on the same directory serialize too,
// keyed by the file's real path: stores reaching one directory through a symlink share it.
const fileLocks = new KeyedLock();

/**
 * A SessionStore with one JSON file per session, `<dir>/<sessionId>.json`, holding
 * `{ version, savedAt, state }`. Writes are atomic (temporary file, fsync, rename, fsync of the
 * directory), so a crash leaves the previous version or the new one; saves of one session
 * serialize in this process, so the version check and the write are atomic. Several processes
 * writing the same directory are not coordinated: use SqliteSessionStore for that.
 *
 * @example
 * const store = new FileSessionStore('./sessions');
 * const version = await store.save('chat-42', state, null);   // writes ./sessions/chat-42.json
 * const { state: again } = (await store.load('chat-42'))!;
 */
export class FileSessionStore implements SessionStore {
  /** The directory, absolute. */
  readonly dir: string;
  private created: Promise<unknown> | null = null;
  private realDir: string | null = null;
  private closed = false;
  private readonly inFlight = new Set<Promise<unknown>>();

  /** @param dir the directory of the session files; created at the first save if missing. */
  constructor(dir: string) {
    this.dir = resolve(dir);
  }

  /** The file of a session (whether or not it exists). */
  fileOf(sessionId: string): string {
    return join(this.dir, `${assertSessionId(sessionId)}${EXTENSION}`);
  }

  load(sessionId: string): Promise<LoadedSession | null> {
    return this.track(async () => {
      const file = this.fileOf(sessionId);
      let bytes: Buffer;
      try {
        bytes = await readFile(file);
      } catch (error) {
        if (isNotFound(error)) return null;
        throw error;
      }
      const at = { sessionId, location: file };
      return decodeSessionDocument(decodeUtf8(bytes, at), at);
    });
  }

  save(sessionId: string, state: AgentState, expectedVersion: number | null): Promise<number> {
    return this.track(async () => {
      const file = this.fileOf(sessionId);
      assertState(state);
      assertExpectedVersion(expectedVersion);
      await this.ensureDir();
      return fileLocks.run(await this.lockKey(file), async () => {
        const actual = await readStoredVersion(file, { sessionId, location: file });
        if (actual !== expectedVersion) throw new SessionConflictError(sessionId, expectedVersion, actual);
        const version = (actual ?? 0) + 1;
        await writeFileAtomic(file, encodeSessionDocument(version, state));
        return version;
      });
    });
  }

  delete(sessionId: string): Promise<void> {
    return this.track(async () => {
      const file = this.fileOf(sessionId);
      await fileLocks.run(await this.lockKey(file), async () => {
        try {
          await unlink(file);
        } catch (error) {
          if (isNotFound(error)) return;
          throw error;
        }
        await syncDirectory(this.dir);
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
      return entries
        .filter((e) => e.isFile() && e.name.endsWith(EXTENSION))
        .map((e) => e.name.slice(0, -EXTENSION.length))
        .filter(isValidSessionId)
        .sort();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    // Each operation's outcome goes to its own caller; close only waits for them to end.
    await Promise.allSettled([...this.inFlight]);
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

/** The version of the stored file, or null when there is none; reads the whole file only if needed. */
async function readStoredVersion(file: string, at: StoredAt): Promise<number | null> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
  try {
    const head = Buffer.alloc(DOCUMENT_HEAD_BYTES);
    const { bytesRead } = await handle.read(head, 0, DOCUMENT_HEAD_BYTES, 0);
    const version = versionFromHead(head.subarray(0, bytesRead).toString('latin1'));
    if (version !== null) return version;
    return storedVersion(decodeUtf8(await handle.readFile(), at), at);
  } finally {
    await handle.close();
  }
}

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

function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === 'ENOENT';
}
