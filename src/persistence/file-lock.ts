import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { SessionFileLockedError } from './errors';
import { type FileStamp, sameStamp, stampNow, stampOf } from './session-file';

/** The suffix of a lock file: `<file>.lock`. */
const LOCK_SUFFIX = '.lock';

/** Who holds a lock, as its file says. */
interface LockHolder {
  readonly pid: number;
  readonly host: string;
  /** Linux's boot id: a process id of an earlier boot names no process now. Empty elsewhere. */
  readonly boot: string;
  readonly token: string;
}

/** The lock file as read: its holder (null when its text is not a holder: damage) and its identity. */
interface LockSeen {
  readonly holder: LockHolder | null;
  /** The holder's token, or a hash of the text: what a breaker checks it still sees. */
  readonly identity: string;
}

let boot: string | null = null;
function bootId(): string {
  if (boot === null) {
    try {
      boot = readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      boot = '';
    }
  }
  return boot;
}

/** The tokens of the locks this process holds (a lock naming this pid and no such token is stale). */
const held = new Set<string>();

/** A lock this process took: the lock file, who it names, and the file's identity then. */
export interface TakenLock {
  readonly lockFile: string;
  readonly holder: LockHolder;
  readonly stamp: LockStamp;
}

/** A lock file's identity: rewritten or replaced, it has another inode, size or modification time. */
type LockStamp = FileStamp;

/**
 * Takes the lock of `file` across the processes of this machine: the file `<file>.lock`, linked
 * into place whole (so it always names its holder). A lock whose holder is a process of this
 * machine that is gone (or of an earlier boot) is taken over; one of another host is waited for.
 * Waits (with backoff) up to `timeoutMs`, then raises SessionFileLockedError. Give it back with
 * `releaseFileLock`.
 *
 * @example
 * const lock = await takeFileLock('/data/sessions/chat-42.journal', 30_000);
 * try { await appendRecord(); } finally { await releaseFileLock(lock); }
 */
export async function takeFileLock(file: string, timeoutMs: number): Promise<TakenLock> {
  const lockFile = `${file}${LOCK_SUFFIX}`;
  const me: LockHolder = {
    pid: process.pid,
    host: hostname(),
    boot: bootId(),
    token: randomBytes(9).toString('base64url'),
  };
  const stamp = await acquire(lockFile, me, timeoutMs);
  held.add(me.token);
  return { lockFile, holder: me, stamp };
}

/**
 * Whether a lock taken earlier is still this process's: its file is the one linked into place
 * then (a lock removed by hand, or overwritten, is not). One synchronous `stat`.
 */
export function stillHeld(lock: TakenLock): boolean {
  const now = stampNow(lock.lockFile);
  return now !== null && sameStamp(now, lock.stamp);
}

/** Gives a lock back: removes its file if it still names this holder. */
export async function releaseFileLock(lock: TakenLock): Promise<void> {
  held.delete(lock.holder.token);
  const seen = await readLock(lock.lockFile);
  if (seen?.identity === lock.holder.token) await unlinkIfPresent(lock.lockFile);
}

/** Links a lock file naming `me` into place, waiting for its holder or taking a stale one over. */
async function acquire(lockFile: string, me: LockHolder, timeoutMs: number): Promise<LockStamp> {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    const stamp = await createWhole(lockFile, me);
    if (stamp) return stamp;
    const seen = await readLock(lockFile);
    if (seen === null) continue; // released in between
    if (isStale(seen.holder) && (await breakStale(lockFile, seen, me))) continue;
    const waited = Date.now() - started;
    if (waited >= timeoutMs)
      throw new SessionFileLockedError(lockFile, seen.holder ?? { pid: 0, host: '?' }, waited);
    await delay(Math.min(2 ** attempt, 25) * (0.5 + Math.random()));
  }
}

/**
 * Removes a stale lock, unless someone else already did. Only the process that makes the marker
 * `<lock>.<identity>.break` may remove the lock with that identity, and it checks under the marker
 * that the lock still has it: so a lock taken meanwhile by a live process is never removed.
 */
async function breakStale(lockFile: string, seen: LockSeen, me: LockHolder): Promise<boolean> {
  const marker = `${lockFile}.${seen.identity}.break`;
  if ((await createWhole(marker, me)) === null) {
    // Another process is breaking it; a marker left by a breaker that is gone is removed.
    const breaker = await readLock(marker);
    if (breaker && isStale(breaker.holder)) await unlinkIfPresent(marker);
    return false;
  }
  try {
    if ((await readLock(lockFile))?.identity === seen.identity) await unlinkIfPresent(lockFile);
  } finally {
    await unlinkIfPresent(marker);
  }
  return true;
}

function isStale(holder: LockHolder | null): boolean {
  // A lock is written whole before it is linked into place: a text that is no holder is damage.
  if (holder === null) return true;
  if (holder.host !== hostname()) return false;
  if (holder.boot !== bootId()) return true;
  if (holder.pid === process.pid) return !held.has(holder.token);
  try {
    process.kill(holder.pid, 0);
    return false;
  } catch (error) {
    // EPERM: the process exists, under another user.
    return (error as NodeJS.ErrnoException).code !== 'EPERM';
  }
}

/** Makes `file` holding `holder`, whole, unless it exists: its identity, or null then. */
async function createWhole(file: string, holder: LockHolder): Promise<LockStamp | null> {
  const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temp, JSON.stringify(holder), { flag: 'wx' });
  try {
    await link(temp, file);
    // The linked file is the temporary one: its identity, stated before the name goes.
    return await stampOf(temp);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return null;
    throw error;
  } finally {
    await unlinkIfPresent(temp);
  }
}

async function readLock(file: string): Promise<LockSeen | null> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  const holder = parseHolder(text);
  return {
    holder,
    identity: holder?.token ?? createHash('sha256').update(text).digest('base64url').slice(0, 12),
  };
}

function parseHolder(text: string): LockHolder | null {
  try {
    const data = JSON.parse(text) as Partial<LockHolder> | null;
    if (
      typeof data?.pid === 'number' &&
      typeof data.host === 'string' &&
      typeof data.boot === 'string' &&
      typeof data.token === 'string' &&
      /^[\w-]+$/.test(data.token)
    )
      return data as LockHolder;
  } catch {
    // Not JSON: damage, as a text that is JSON but no holder is.
  }
  return null;
}

async function unlinkIfPresent(file: string): Promise<void> {
  try {
    await unlink(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}
