import { type FileHandle, open, stat, unlink } from 'node:fs/promises';

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

/** Appends `bytes` at `end` (cutting off a torn tail first) and, if `sync`, flushes the file to disk. */
export async function appendAt(
  file: string,
  end: number,
  size: number,
  bytes: Buffer,
  sync: boolean,
): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    if (end < size) await handle.truncate(end);
    await handle.write(bytes, 0, bytes.length, end);
    if (sync) await handle.sync();
  } finally {
    await handle.close();
  }
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

/** The bytes of a file and its identity when read, or null when it does not exist. */
export async function readIfPresent(file: string): Promise<{ bytes: Buffer; stamp: FileStamp } | null> {
  let handle: FileHandle;
  try {
    handle = await open(file, 'r');
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
  try {
    // Stated before reading: if the file grows meanwhile, the stamp no longer matches, and the
    // next save reads it again.
    const { ino, mtimeMs } = await handle.stat();
    const bytes = await handle.readFile();
    return { bytes, stamp: { ino, size: bytes.length, mtimeMs } };
  } finally {
    await handle.close();
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
