import {
  closeSync,
  fdatasync,
  fstatSync,
  ftruncateSync,
  openSync,
  readFileSync,
  statSync,
  writeSync,
} from 'node:fs';
import { stat, unlink } from 'node:fs/promises';

/**
 * A session file's identity when it was read or written last: a file with another inode, size or
 * modification time was written by someone else (or replaced).
 */
export interface FileStamp {
  readonly ino: number;
  readonly size: number;
  readonly mtimeMs: number;
}

export const sameStamp = (a: FileStamp, b: FileStamp) =>
  a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;

/**
 * Appends `bytes` at `end` (cutting off a torn tail first) and, if `sync`, flushes the file to
 * disk; the file's identity after. The open, write and stat are synchronous calls (a few µs each
 * into the page cache, where each asynchronous one costs tens of µs of CPU); the flush, which waits
 * for the disk, is not.
 */
export async function appendAt(
  file: string,
  end: number,
  size: number,
  bytes: Buffer,
  sync: boolean,
): Promise<FileStamp> {
  const fd = openSync(file, 'r+');
  try {
    if (end < size) ftruncateSync(fd, end);
    for (let written = 0; written < bytes.length; )
      written += writeSync(fd, bytes, written, bytes.length - written, end + written);
    if (sync) await flush(fd);
    const { ino, size: after, mtimeMs } = fstatSync(fd);
    return { ino, size: after, mtimeMs };
  } finally {
    closeSync(fd);
  }
}

/**
 * fdatasync: the data and what reading it needs (the new size) reach the disk, as with fsync,
 * without waiting for the modification time (a median 182 against 237 µs a save, interleaved, on
 * ext4; `npm run bench persistence-levers`).
 */
function flush(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));
}

/** The file's identity now, or null when it does not exist (a synchronous `stat`). */
export function stampNow(file: string): FileStamp | null {
  const found = statSync(file, { throwIfNoEntry: false });
  return found ? { ino: found.ino, size: found.size, mtimeMs: found.mtimeMs } : null;
}

export async function stampOf(file: string): Promise<FileStamp | null> {
  try {
    const { ino, size, mtimeMs } = await stat(file);
    return { ino, size, mtimeMs };
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}

/**
 * The bytes of a file and its identity when read, or null when it does not exist. Synchronous
 * calls, as `appendAt`: each asynchronous one (open, stat, a read per 512 KiB, close) is a round
 * trip through the thread pool, which made up a third of a 100-step load's wall time.
 */
export async function readIfPresent(file: string): Promise<{ bytes: Buffer; stamp: FileStamp } | null> {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
  try {
    // Stated before reading: if the file grows meanwhile, the stamp no longer matches, and the
    // next save reads it again.
    const { ino, mtimeMs } = fstatSync(fd);
    const bytes = readFileSync(fd);
    return { bytes, stamp: { ino, size: bytes.length, mtimeMs } };
  } finally {
    closeSync(fd);
  }
}

export async function unlinkIfPresent(file: string): Promise<boolean> {
  try {
    await unlink(file);
    return true;
  } catch (error) {
    if (isNotFound(error)) return false;
    throw error;
  }
}

export function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | null)?.code === 'ENOENT';
}
