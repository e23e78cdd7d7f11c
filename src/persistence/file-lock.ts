import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { link, readFile, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { setTimeout as delay } from 'node:timers/promises';
import { SessionFileLockedError } from './errors';

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

/**
 * Runs `task` holding the lock of `file` across the processes of this machine: the file
 * `<file>.lock`, linked into place whole (so it always names its holder) and removed when the task
 * ends. A lock whose holder is a process of this machine that is gone (or of an earlier boot) is
 * taken over; one of another host is waited for. Waits (with backoff) up to `timeoutMs`, then
 * raises SessionFileLockedError.
 *
 * @example
 * await withFileLock('/data/sessions/chat-42.journal', () => appendRecord(), 30_000);
 */
export async function withFileLock<T>(file: string, task: () => Promise<T>, timeoutMs: number): Promise<T> {
  const lockFile = `${file}${LOCK_SUFFIX}`;
  const me: LockHolder = {
    pid: process.pid,
    host: hostname(),
    boot: bootId(),
    token: randomBytes(9).toString('base64url'),
  };
  await acquire(lockFile, me, timeoutMs);
  held.add(me.token);
  try {
    return await task();
  } finally {
    held.delete(me.token);
    const seen = await readLock(lockFile);
    if (seen?.identity === me.token) await unlinkIfPresent(lockFile);
  }
}

async function acquire(lockFile: string, me: LockHolder, timeoutMs: number): Promise<void> {
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    if (await createWhole(lockFile, me)) return;
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
  if (!(await createWhole(marker, me))) {
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

/** Makes `file` holding `holder`, whole, unless it exists: false then. */
async function createWhole(file: string, holder: LockHolder): Promise<boolean> {
  const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temp, JSON.stringify(holder), { flag: 'wx' });
  try {
    await link(temp, file);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
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
