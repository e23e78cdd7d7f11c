import { randomUUID } from 'node:crypto';
import { InvalidArgumentError } from '../state/errors';
import { SessionLockLostError } from './errors';
import { hashTag } from './redis-keys';
import type { RedisLockCommands } from './redis-types';

/** KEYS: the lock; ARGV: the token, the TTL in ms. 1 when the lock is still ours (and extended). */
const RENEW_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0
`;

/** KEYS: the lock; ARGV: the token. Deletes the lock only if it is still ours. */
const RELEASE_SCRIPT = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

export const DEFAULT_SESSION_LOCK_PREFIX = 'agent-machine:session-lock:';
export const DEFAULT_SESSION_LOCK_TTL_MS = 6_000;

export interface SessionLocksOptions {
  /**
   * Key prefix (default `agent-machine:session-lock:`); the key is `<prefix>{<session id>}`, in
   * the session's slot on Redis Cluster (its hash tag is the session's, see redis-keys.ts).
   */
  readonly prefix?: string;
  /**
   * How long a lock lives without renewal (default 6 s). Its holder renews it every third of
   * that; a holder that dies stops renewing, and the lock expires after at most this long. A
   * holder whose event loop is blocked for more than two thirds of it may lose the lock.
   */
  readonly ttlMs?: number;
  /** Where renewal errors go (the lock is given up only once the TTL has passed without renewal). */
  readonly onError?: (error: Error) => void;
}

/**
 * Per-session mutual exclusion across processes: `SET <prefix><id> <token> NX PX <ttl>`, renewed by
 * its holder and released with a compare-and-delete script, so a holder never removes a lock that
 * expired and was taken by someone else.
 *
 * @example
 * const locks = new SessionLocks(redis, { ttlMs: 10_000 });
 * const lock = await locks.acquire('chat-42', 'worker-1/job-7');
 * if (lock) try { ... } finally { await lock.release(); }
 */
export class SessionLocks {
  readonly prefix: string;
  readonly ttlMs: number;

  constructor(
    private readonly redis: RedisLockCommands,
    private readonly options: SessionLocksOptions = {},
  ) {
    this.prefix = options.prefix ?? DEFAULT_SESSION_LOCK_PREFIX;
    this.ttlMs = options.ttlMs ?? DEFAULT_SESSION_LOCK_TTL_MS;
    if (!Number.isSafeInteger(this.ttlMs) || this.ttlMs < 100)
      throw new InvalidArgumentError('sessionLockTtlMs', `${this.ttlMs} is not an integer >= 100 (ms)`);
  }

  key(sessionId: string): string {
    return `${this.prefix}{${hashTag(sessionId)}}`;
  }

  /** Takes the session's lock for `owner` (a label kept in the token), or null if someone holds it. */
  async acquire(sessionId: string, owner: string): Promise<SessionLock | null> {
    const token = `${owner}/${randomUUID()}`;
    const key = this.key(sessionId);
    const taken = await this.redis.set(key, token, 'PX', this.ttlMs, 'NX');
    if (taken !== 'OK') return null;
    return new SessionLock(this.redis, sessionId, key, token, this.ttlMs, this.options.onError);
  }

  /** The token of the session's current holder, or null. */
  holder(sessionId: string): Promise<string | null> {
    return this.redis.get(this.key(sessionId));
  }
}

/** A held session lock, renewed in the background until released or lost. */
export class SessionLock {
  private timer: NodeJS.Timeout | null = null;
  private lastRenewed = Date.now();
  private lostError: SessionLockLostError | null = null;
  private released = false;
  private readonly lostListeners: ((error: SessionLockLostError) => void)[] = [];

  constructor(
    private readonly redis: RedisLockCommands,
    readonly sessionId: string,
    readonly key: string,
    readonly token: string,
    private readonly ttlMs: number,
    private readonly onError?: (error: Error) => void,
  ) {
    this.schedule();
  }

  /** The error that says why the lock was lost, or null while it is held. */
  lost(): SessionLockLostError | null {
    return this.lostError;
  }

  /** Calls `listener` once if the lock is lost (not when it is released). */
  onLost(listener: (error: SessionLockLostError) => void): void {
    if (this.lostError) listener(this.lostError);
    else this.lostListeners.push(listener);
  }

  /**
   * Asks Redis whether the lock is still this holder's (its token is the key's value): resolves if
   * it is, else marks it lost and raises SessionLockLostError (SESSION_LOCK_LOST). What a store
   * without a fenced save checks before each checkpoint and after an intent save.
   */
  async verify(): Promise<void> {
    if (this.lostError) throw this.lostError;
    const holder = await this.redis.get(this.key);
    if (holder === this.token) return;
    throw this.lose(holder === null ? 'it expired' : 'another holder has it');
  }

  /** Marks the lock lost because a fenced save found another token (or none) on its key. */
  refused(): SessionLockLostError {
    return this.lostError ?? this.lose('a save was refused: another holder has it, or it expired');
  }

  /** Stops renewing and deletes the lock if it is still ours. */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.lostError) return;
    await this.redis.eval(RELEASE_SCRIPT, 1, this.key, this.token);
  }

  private schedule(): void {
    this.timer = setTimeout(() => void this.renew(), Math.max(50, Math.floor(this.ttlMs / 3)));
  }

  private async renew(): Promise<void> {
    this.timer = null;
    if (this.released) return;
    try {
      const extended = await this.redis.eval(RENEW_SCRIPT, 1, this.key, this.token, String(this.ttlMs));
      if (this.released) return;
      if (extended === 1) {
        this.lastRenewed = Date.now();
      } else {
        this.lose('another holder has it, or it expired');
        return;
      }
    } catch (error) {
      if (this.released) return;
      this.onError?.(error as Error);
      if (Date.now() - this.lastRenewed >= this.ttlMs) {
        this.lose(`it could not be renewed for ${this.ttlMs} ms`, error);
        return;
      }
    }
    this.schedule();
  }

  private lose(detail: string, cause?: unknown): SessionLockLostError {
    const lost = new SessionLockLostError(this.sessionId, detail, cause ? { cause } : undefined);
    this.lostError = lost;
    for (const listener of this.lostListeners.splice(0)) listener(lost);
    return lost;
  }
}
