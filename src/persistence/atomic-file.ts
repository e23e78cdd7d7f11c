import { randomBytes } from 'node:crypto';
import { open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** The suffix of the temporary files `writeFileAtomic` writes; readers ignore such files. */
const TEMP_SUFFIX = '.tmp';

/**
 * Replaces `file` with `data` so that a crash at any moment leaves either the old content or the
 * new, never a mix: the data goes to a temporary file in the same directory (same file system, so
 * the rename is atomic), which is flushed to disk, renamed over `file`, and the directory is
 * flushed so that the rename itself survives a power loss. With `sync: false` nothing is flushed:
 * the file is whole or absent after a crash of the process, not after a power loss.
 */
export async function writeFileAtomic(
  file: string,
  data: string | Uint8Array,
  options: { readonly sync?: boolean } = {},
): Promise<void> {
  const sync = options.sync ?? true;
  const dir = dirname(file);
  const temp = join(dir, `.${basename(file)}.${randomBytes(6).toString('hex')}${TEMP_SUFFIX}`);
  try {
    const handle = await open(temp, 'wx');
    try {
      await handle.writeFile(data);
      if (sync) await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, file);
  } catch (error) {
    await removeAfterFailure(temp, error);
    throw error;
  }
  if (sync) await syncDirectory(dir);
}

/** Flushes a directory's entries (a rename, a removal) to disk. */
export async function syncDirectory(dir: string): Promise<void> {
  // Windows cannot open a directory for flushing; NTFS journals renames itself.
  if (process.platform === 'win32') return;
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function removeAfterFailure(temp: string, error: unknown): Promise<void> {
  try {
    await rm(temp, { force: true });
  } catch (cleanupError) {
    throw new AggregateError(
      [error, cleanupError],
      `Writing ${temp} failed, and so did removing it: ${(error as Error).message}; ${(cleanupError as Error).message}`,
    );
  }
}
