import type * as BullMQ from 'bullmq';
import type { Redis, RedisOptions } from 'ioredis';
import { DistributedDependencyMissingError } from './errors';
import type { RedisConnection } from './redis-types';

export type BullMQModule = typeof BullMQ;
type RedisConstructor = new (options: RedisOptions) => Redis;

let ioredis: Promise<RedisConstructor> | null = null;
let bullmq: Promise<BullMQModule> | null = null;

/**
 * Loads ioredis at first use, so that it stays an optional peer: only users of the Redis parts
 * install it. A failed load raises DistributedDependencyMissingError and is not cached.
 */
function loadIoredis(): Promise<RedisConstructor> {
  if (!ioredis) {
    const loading = importModule<{ Redis?: RedisConstructor; default?: RedisConstructor }>('ioredis').then(
      (module) => {
        const ctor = module.Redis ?? module.default;
        if (typeof ctor !== 'function')
          throw new DistributedDependencyMissingError('ioredis', {
            cause: new Error('the package does not export a Redis class'),
          });
        return ctor;
      },
    );
    ioredis = loading;
    loading.catch(() => {
      if (ioredis === loading) ioredis = null;
    });
  }
  return ioredis;
}

/** Loads BullMQ at first use (see `loadIoredis`). */
export function loadBullmq(): Promise<BullMQModule> {
  if (!bullmq) {
    const loading = importModule<BullMQModule>('bullmq');
    bullmq = loading;
    loading.catch(() => {
      if (bullmq === loading) bullmq = null;
    });
  }
  return bullmq;
}

/** Imports an optional package, or raises DistributedDependencyMissingError naming it. */
export async function importModule<T>(name: string): Promise<T> {
  try {
    // A variable specifier keeps bundlers from inlining the package or failing without it.
    return (await import(name)) as T;
  } catch (error) {
    throw new DistributedDependencyMissingError(name, { cause: error });
  }
}

// The public types are structural (redis-types.ts); what is passed is ioredis's own.
function isClient(connection: RedisConnection): connection is Redis {
  return typeof (connection as Redis).duplicate === 'function';
}

/**
 * A new ioredis connection of our own to the Redis `connection` names (a duplicate of a given
 * client). The caller closes it with `closeRedis`.
 */
export async function openRedis(connection: RedisConnection, overrides: RedisOptions = {}): Promise<Redis> {
  if (isClient(connection)) return connection.duplicate(overrides);
  const Redis = await loadIoredis();
  return new Redis({ ...(connection as RedisOptions), ...overrides });
}

/**
 * What BullMQ is given as its connection: options of its own (BullMQ opens and closes the
 * connections), never the caller's client, whose lifetime is the caller's.
 */
export function bullmqConnection(connection: RedisConnection): BullMQ.ConnectionOptions {
  const options = isClient(connection) ? connection.options : (connection as RedisOptions);
  // BullMQ's blocking commands must not be cut short by a retry limit.
  return { ...options, maxRetriesPerRequest: null } as BullMQ.ConnectionOptions;
}

/** Closes a connection we opened: QUIT, or a disconnect when the server cannot be reached. */
export async function closeRedis(redis: Redis): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status !== 'ready') {
    redis.disconnect();
    return;
  }
  await redis.quit();
}
