import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SessionLockLostError, SessionLocks } from '../../src/distributed/index';
import { InvalidArgumentError } from '../../src/state/errors';
import { type RedisServer, startRedisServer } from './support/redis-server';

let server: RedisServer;
let redis: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  redis = new Redis(server.connection);
}, 20_000);
afterAll(async () => {
  await redis?.quit();
  await server?.stop();
});

const locksFor = (ttlMs = 30_000, onError?: (e: Error) => void) =>
  new SessionLocks(redis, { prefix: `lock-${randomUUID()}:`, ttlMs, onError });

describe('SessionLocks', () => {
  it('gives a session to one holder at a time, and to the next after release', async () => {
    const locks = locksFor();
    const first = await locks.acquire('s', 'worker-1/job-1');
    expect(first).not.toBeNull();
    expect(await locks.acquire('s', 'worker-2/job-2')).toBeNull();
    expect(await locks.acquire('other', 'worker-2/job-2')).not.toBeNull();
    expect(await locks.holder('s')).toBe(first?.token);
    expect(first?.token.startsWith('worker-1/job-1/')).toBe(true);
    expect(await redis.pttl(locks.key('s'))).toBeGreaterThan(0);
    await first?.release();
    await first?.release(); // twice is fine
    expect(await locks.holder('s')).toBeNull();
    const second = await locks.acquire('s', 'worker-2/job-2');
    expect(second).not.toBeNull();
    await second?.release();
  });

  it('keeps a lock alive past its TTL while the holder renews it', async () => {
    // generous against a loaded machine: a renewal (every ttl/3) only has to land within one TTL
    const ttlMs = 2_000;
    const locks = locksFor(ttlMs);
    const acquiredAt = Date.now();
    const lock = await locks.acquire('renewed', 'w/j');
    // Two TTLs later (renewed every ttl/3), the lock is still the holder's.
    while (Date.now() - acquiredAt < 2 * ttlMs) {
      await new Promise((resolve) => setTimeout(resolve, 150));
      expect(await locks.holder('renewed')).toBe(lock?.token);
    }
    expect(lock?.lost()).toBeNull();
    await lock?.release();
  });

  it('expires a lock whose holder died (stopped renewing), so another can take it', async () => {
    const locks = locksFor(150);
    await redis.set(locks.key('dead'), 'dead-worker/job/token', 'PX', 150);
    expect(await locks.acquire('dead', 'w2/j')).toBeNull();
    let next = null;
    await vi.waitUntil(
      async () => {
        next = await locks.acquire('dead', 'w2/j');
        return next !== null;
      },
      { timeout: 5_000, interval: 20 },
    );
    await (next as unknown as { release(): Promise<void> }).release();
  });

  it('reports a lost lock once, and never deletes the lock of the next holder', async () => {
    const locks = locksFor(150);
    const lock = await locks.acquire('taken', 'w1/j1');
    const lost: SessionLockLostError[] = [];
    lock?.onLost((e) => lost.push(e));
    // It expired and someone else took it.
    await redis.set(locks.key('taken'), 'w2/j2/token', 'PX', 60_000);
    await vi.waitUntil(() => lost.length > 0, { timeout: 5_000, interval: 10 });
    expect(lost).toHaveLength(1);
    expect(lost[0]).toBeInstanceOf(SessionLockLostError);
    expect(lost[0]).toMatchObject({ code: 'SESSION_LOCK_LOST', sessionId: 'taken' });
    expect(lock?.lost()).toBe(lost[0]);
    const late: SessionLockLostError[] = [];
    lock?.onLost((e) => late.push(e)); // a listener added after the loss hears of it at once
    expect(late).toEqual(lost);
    await lock?.release();
    expect(await locks.holder('taken')).toBe('w2/j2/token');
  });

  it('refuses a TTL that is not an integer of at least 100 ms', () => {
    expect(() => locksFor(10)).toThrow(InvalidArgumentError);
    expect(() => locksFor(1.5)).toThrow(/sessionLockTtlMs/);
  });
});
