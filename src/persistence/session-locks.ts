import { dirname } from 'node:path';
import { clearTimeout, setTimeout as schedule } from 'node:timers';
import { releaseFileLock, stillHeld, type TakenLock, takeFileLock } from './file-lock';
import { KeyedLock } from './keyed-lock';

/** A cross-process lock kept after a task, and the release that is due unless another task comes. */
interface KeptLock {
  readonly lock: TakenLock;
  /** Which keeping this is: a release scheduled for an earlier one no longer applies. */
  readonly use: number;
  timer: ReturnType<typeof schedule> | null;
}

/**
 * The session locks of this process, by key (a session file's real path): a task runs after the
 * tasks of its key started before it (in this process), holding the session's lock file across
 * processes (file-lock.ts). The lock file is kept `holdMs` after a task, so the next save of a
 * busy session takes no lock file (the file operations of a lock cost more than an append and its
 * fsync); a kept lock is checked to be still this process's with one `stat` before it is used. A
 * process that is gone leaves its lock file behind, which the next taker takes over, as after a
 * crash mid-save.
 *
 * @example
 * const locks = new SessionLocks();
 * await locks.run(realFile, file, () => appendRecord(), { timeoutMs: 30_000, holdMs: 50 });
 */
export class SessionLocks {
  private readonly queue = new KeyedLock();
  private readonly kept = new Map<string, KeptLock>();
  private uses = 0;

  run<T>(
    key: string,
    file: string,
    task: () => Promise<T>,
    options: { readonly timeoutMs: number; readonly holdMs: number },
  ): Promise<T> {
    return this.queue.run(key, async () => {
      const lock = await this.take(key, file, options.timeoutMs);
      try {
        return await task();
      } finally {
        await this.keepOrRelease(key, lock, options.holdMs);
      }
    });
  }

  /** Gives back now the locks this process keeps of the files in `dirs` (a store's directory). */
  async releaseIn(dirs: readonly string[]): Promise<void> {
    const keys = [...this.kept.keys()].filter((key) => dirs.includes(dirname(key)));
    await Promise.all(keys.map((key) => this.queue.run(key, () => this.releaseKept(key, null))));
  }

  private async take(key: string, file: string, timeoutMs: number): Promise<TakenLock> {
    const kept = this.kept.get(key);
    if (kept) {
      this.kept.delete(key);
      if (kept.timer) clearTimeout(kept.timer);
      if (stillHeld(kept.lock)) return kept.lock;
      // Removed or overwritten meanwhile (by hand, or by someone who took it for stale): given
      // back as far as this process is concerned, and taken again below.
      await releaseFileLock(kept.lock);
    }
    return takeFileLock(file, timeoutMs);
  }

  private async keepOrRelease(key: string, lock: TakenLock, holdMs: number): Promise<void> {
    if (holdMs <= 0) {
      await releaseFileLock(lock);
      return;
    }
    const use = ++this.uses;
    const kept: KeptLock = { lock, use, timer: null };
    kept.timer = schedule(() => {
      this.queue
        .run(key, () => this.releaseKept(key, use))
        .catch((error: unknown) => {
          // Nobody awaits a timed release: its failure is reported, and the lock file is taken
          // over once this process is gone.
          process.emitWarning(
            `agent-machine could not remove the lock file ${lock.lockFile}: ${(error as Error).message}`,
            { code: 'AGENT_MACHINE_LOCK_RELEASE' },
          );
        });
    }, holdMs);
    this.kept.set(key, kept);
  }

  /** Releases the kept lock of `key` (only the keeping `use`, unless null). */
  private async releaseKept(key: string, use: number | null): Promise<void> {
    const kept = this.kept.get(key);
    if (!kept || (use !== null && kept.use !== use)) return;
    this.kept.delete(key);
    if (kept.timer) clearTimeout(kept.timer);
    await releaseFileLock(kept.lock);
  }
}
