import type * as BullMQ from 'bullmq';
import type { Cluster, Redis, RedisOptions } from 'ioredis';
import { InvalidArgumentError } from '../state/errors';
import { DistributedDependencyMissingError, RedisUnreachableError } from './errors';
import { hasHashTag } from './redis-keys';
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

/** A connection agent-machine opened: to one Redis, or to a Redis Cluster. */
export type RedisHandle = Redis | Cluster;

/** How long a first connection may take before REDIS_UNREACHABLE (ms). */
export const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;

// The public types are structural (redis-types.ts); what is passed is ioredis's own.
function isClient(connection: RedisConnection): connection is Redis | Cluster {
  return typeof (connection as Redis).duplicate === 'function';
}

/** Whether `connection` is an ioredis Cluster client. */
function isCluster(connection: unknown): connection is Cluster {
  return typeof connection === 'object' && connection !== null && (connection as Cluster).isCluster === true;
}

/**
 * A new ioredis connection of our own to the Redis `connection` names (a duplicate of a given
 * client or Cluster; `overrides` are a Cluster's `redisOptions`). The caller closes it with
 * `closeRedis`.
 */
async function openRedis(connection: RedisConnection, overrides: RedisOptions = {}): Promise<RedisHandle> {
  if (isCluster(connection))
    return connection.duplicate([], {
      redisOptions: { ...connection.options.redisOptions, ...overrides },
    });
  if (isClient(connection)) return (connection as Redis).duplicate(overrides);
  const Redis = await loadIoredis();
  return new Redis({ ...(connection as RedisOptions), ...overrides });
}

/**
 * `openRedis`, resolved once the connection is ready; a connection not ready within `timeoutMs`
 * is dropped and RedisUnreachableError names the address tried.
 */
export async function connectRedis(
  connection: RedisConnection,
  timeoutMs: number,
  overrides: RedisOptions = {},
): Promise<RedisHandle> {
  const redis = await openRedis(connection, overrides);
  let lastError: unknown = null;
  const remember = (error: unknown) => {
    lastError = error;
  };
  redis.on('error', remember);
  try {
    await new Promise<void>((resolve, reject) => {
      if (redis.status === 'ready') return resolve();
      const timer = setTimeout(() => {
        cleanup();
        reject(new RedisUnreachableError(describeRedis(connection), timeoutMs, { cause: lastError }));
      }, timeoutMs);
      const onReady = () => {
        cleanup();
        resolve();
      };
      const onEnd = () => {
        cleanup();
        reject(new RedisUnreachableError(describeRedis(connection), timeoutMs, { cause: lastError }));
      };
      const cleanup = () => {
        clearTimeout(timer);
        redis.off('ready', onReady);
        redis.off('end', onEnd);
      };
      redis.on('ready', onReady);
      redis.on('end', onEnd);
      if (redis.status === 'wait') redis.connect().catch(remember);
    });
  } catch (error) {
    redis.disconnect();
    throw error;
  } finally {
    redis.off('error', remember);
  }
  return redis;
}

/** The address `connection` names, as the caller gave it (for error messages). */
function describeRedis(connection: RedisConnection): string {
  if (isCluster(connection)) {
    const nodes = (connection as unknown as { startupNodes?: unknown[] }).startupNodes ?? [];
    const names = nodes.map((node) =>
      typeof node === 'string' || typeof node === 'number' ? String(node) : addressOf(node as RedisOptions),
    );
    return `the Redis Cluster of startup nodes ${names.join(', ') || '(none)'}`;
  }
  return addressOf(isClient(connection) ? (connection as Redis).options : (connection as RedisOptions));
}

function addressOf(options: RedisOptions): string {
  if (options.path) return options.path;
  if (options.host === undefined && options.port === undefined)
    return "localhost:6379 (ioredis's default: the options name no host or port)";
  return `${options.host ?? 'localhost'}:${options.port ?? 6379}`;
}

/**
 * What BullMQ is given as its connection. For a Cluster: a Cluster of our own (BullMQ documents
 * that it takes a Cluster instance; it duplicates it for its blocking reads), which the caller
 * closes after BullMQ closed; else options of its own (BullMQ opens and closes the connections),
 * never the caller's client, whose lifetime is the caller's.
 */
export function bullmqConnection(connection: RedisConnection): {
  readonly connection: BullMQ.ConnectionOptions;
  readonly owned: Cluster | null;
} {
  // BullMQ's blocking commands must not be cut short by a retry limit.
  if (isCluster(connection)) {
    const owned = connection.duplicate([], {
      redisOptions: { ...connection.options.redisOptions, maxRetriesPerRequest: null },
    });
    return { connection: owned as unknown as BullMQ.ConnectionOptions, owned };
  }
  const options = isClient(connection) ? (connection as Redis).options : (connection as RedisOptions);
  return {
    connection: { ...options, maxRetriesPerRequest: null } as BullMQ.ConnectionOptions,
    owned: null,
  };
}

/**
 * BullMQ's key prefix: the one given, or on a Cluster `{bull:<queue>}` (a hash tag: BullMQ's
 * scripts touch all of a queue's keys, which must share a slot; one tag per queue spreads queues
 * over the masters). A prefix without a hash tag is refused on a Cluster.
 */
export function bullmqPrefix(
  connection: RedisConnection,
  prefix: string | undefined,
  queueName: string,
): string | undefined {
  if (!isCluster(connection)) return prefix;
  if (prefix === undefined) return `{bull:${queueName}}`;
  if (!hasHashTag(`${prefix}:${queueName}:`))
    throw new InvalidArgumentError(
      'prefix',
      `${JSON.stringify(prefix)} has no hash tag: on Redis Cluster BullMQ's keys must share a slot, give a prefix such as "{${prefix}}"`,
    );
  return prefix;
}

/** Closes a connection we opened: QUIT, or a disconnect when the server cannot be reached. */
export async function closeRedis(redis: RedisHandle): Promise<void> {
  if (redis.status === 'end') return;
  if (redis.status !== 'ready') {
    redis.disconnect();
    return;
  }
  await redis.quit();
}

/** The keys matching `pattern` on every master (each master of a Cluster holds its slots' keys). */
export async function scanKeys(redis: RedisHandle, pattern: string): Promise<string[]> {
  const nodes = isCluster(redis) ? redis.nodes('master') : [redis];
  const found: string[] = [];
  for (const node of nodes) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
      found.push(...keys);
      cursor = next;
    } while (cursor !== '0');
  }
  return found;
}

/** A `connectTimeoutMs` option, checked, or the default. */
export function connectTimeout(value: number | undefined): number {
  if (value === undefined) return DEFAULT_CONNECT_TIMEOUT_MS;
  if (!Number.isSafeInteger(value) || value < 1)
    throw new InvalidArgumentError('connectTimeoutMs', `${value} is not a positive integer (ms)`);
  return value;
}

/** `ready`, or RedisUnreachableError naming `connection` when it has not resolved within `timeoutMs`. */
export async function readyWithin(
  ready: Promise<unknown>,
  connection: RedisConnection,
  timeoutMs: number,
): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new RedisUnreachableError(describeRedis(connection), timeoutMs)),
      timeoutMs,
    );
  });
  try {
    await Promise.race([ready, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
