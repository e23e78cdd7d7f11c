import type { Redis } from 'ioredis';
import { CorruptSessionError, SessionConflictError, StoreClosedError } from '../persistence/errors';
import {
  decodeSessionDocument,
  encodeSessionDocument,
  type StoredAt,
  storedVersion,
} from '../persistence/session-document';
import { assertSessionId } from '../persistence/session-id';
import type { LoadedSession, SessionStore } from '../persistence/session-store';
import { assertExpectedVersion, assertState } from '../persistence/store-arguments';
import type { AgentState } from '../state/agent-state';
import { InvalidArgumentError } from '../state/errors';
import { closeRedis, openRedis } from './redis-modules';
import type { RedisConnection } from './redis-types';

/** The prefix of the store's keys when none is given. */
export const DEFAULT_SESSION_KEY_PREFIX = 'agent-machine:';

/**
 * The check-and-set of a save, atomic because Redis runs a script alone. The stored version is read
 * from the first 64 bytes of the document (`{"version":N,`, as every store writes it); a document of
 * another shape is decoded whole. KEYS: the session, the index. ARGV: the expected version ('' for
 * none), the new document, the session id. Replies `{ 'ok' }`, `{ 'conflict', storedVersion }` or
 * `{ 'corrupt' }` (the stored version cannot be read; nothing written).
 */
const SAVE_SCRIPT = `
local actual = ''
if redis.call('EXISTS', KEYS[1]) == 1 then
  local head = redis.call('GETRANGE', KEYS[1], 0, 63)
  actual = string.match(head, '^{"version":([1-9][0-9]*),')
  if not actual then
    local ok, doc = pcall(cjson.decode, redis.call('GET', KEYS[1]))
    local v = ok and type(doc) == 'table' and doc['version']
    if type(v) ~= 'number' or v < 1 or v % 1 ~= 0 then return {'corrupt'} end
    actual = string.format('%.0f', v)
  end
end
if actual ~= ARGV[1] then return {'conflict', actual} end
redis.call('SET', KEYS[1], ARGV[2])
redis.call('ZADD', KEYS[2], 0, ARGV[3])
return {'ok'}
`;

/** KEYS: the session, the index; ARGV: the session id. */
const DELETE_SCRIPT = `
redis.call('DEL', KEYS[1])
redis.call('ZREM', KEYS[2], ARGV[1])
return 1
`;

export interface RedisSessionStoreOptions {
  /** Where Redis is: ioredis options, or a client (the store opens a duplicate of it). */
  readonly connection: RedisConnection;
  /**
   * Prefix of every key (default `agent-machine:`): sessions are `<prefix>session:<id>`, the index
   * of ids is `<prefix>sessions`. Stores with different prefixes do not see each other's sessions.
   */
  readonly prefix?: string;
}

/**
 * A SessionStore in Redis, for agents that run on several machines (see createAgentWorker). Each
 * session is one string key holding the same document the file store writes
 * (`{"version":N,"savedAt":...,"state":...}`); a sorted set indexes the ids for `list()`. A save is
 * one Lua script that checks the stored version and writes, so the optimistic version check holds
 * across every process sharing the Redis server. ioredis is loaded and the connection opened at
 * first use (`npm install ioredis`).
 *
 * Redis keeps data in memory: configure persistence (AOF `appendfsync everysec` or `always`) if
 * checkpoints must survive a restart of the Redis server.
 *
 * @example
 * const store = new RedisSessionStore({ connection: { host: '127.0.0.1', port: 6379 }, prefix: 'app:' });
 * const version = await store.save('chat-42', state, null);  // 1
 * await store.save('chat-42', next, version);                // 2
 * await store.close();
 */
export class RedisSessionStore implements SessionStore {
  readonly prefix: string;
  private readonly connection: RedisConnection;
  private opening: Promise<Redis> | null = null;
  private closed = false;
  private readonly inFlight = new Set<Promise<unknown>>();

  constructor(options: RedisSessionStoreOptions) {
    if (!options || typeof options !== 'object' || !options.connection)
      throw new InvalidArgumentError(
        'options.connection',
        'expected ioredis options ({ host, port }) or an ioredis client',
      );
    const prefix = options.prefix ?? DEFAULT_SESSION_KEY_PREFIX;
    if (typeof prefix !== 'string') throw new InvalidArgumentError('options.prefix', 'expected a string');
    this.connection = options.connection;
    this.prefix = prefix;
  }

  /** The Redis key that holds a session's document. */
  sessionKey(sessionId: string): string {
    return `${this.prefix}session:${sessionId}`;
  }

  /** The Redis key of the sorted set of stored session ids. */
  indexKey(): string {
    return `${this.prefix}sessions`;
  }

  load(sessionId: string): Promise<LoadedSession | null> {
    return this.run(async (redis) => {
      const id = assertSessionId(sessionId);
      const text = await redis.get(this.sessionKey(id));
      return text === null ? null : decodeSessionDocument(text, this.at(id));
    });
  }

  save(sessionId: string, state: AgentState, expectedVersion: number | null): Promise<number> {
    return this.run(async (redis) => {
      const id = assertSessionId(sessionId);
      assertState(state);
      assertExpectedVersion(expectedVersion);
      const version = (expectedVersion ?? 0) + 1;
      const document = encodeSessionDocument(version, state);
      const key = this.sessionKey(id);
      const reply = (await redis.eval(
        SAVE_SCRIPT,
        2,
        key,
        this.indexKey(),
        expectedVersion === null ? '' : String(expectedVersion),
        document,
        id,
      )) as [string, string?];
      if (reply[0] === 'ok') return version;
      if (reply[0] === 'conflict') {
        const actual = reply[1] === '' || reply[1] === undefined ? null : Number(reply[1]);
        throw new SessionConflictError(id, expectedVersion, actual);
      }
      // The stored version cannot be read: name what is wrong as the other stores do.
      const text = (await redis.get(key)) ?? '';
      storedVersion(text, this.at(id));
      throw new CorruptSessionError(id, 'the stored version cannot be read', this.at(id).location);
    });
  }

  delete(sessionId: string): Promise<void> {
    return this.run(async (redis) => {
      const id = assertSessionId(sessionId);
      await redis.eval(DELETE_SCRIPT, 2, this.sessionKey(id), this.indexKey(), id);
    });
  }

  list(): Promise<string[]> {
    return this.run(async (redis) => (await redis.zrange(this.indexKey(), 0, -1)).sort());
  }

  /** Waits for the operations in flight, then closes the store's connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.inFlight]);
    const opening = this.opening;
    this.opening = null;
    if (!opening) return;
    let redis: Redis;
    try {
      redis = await opening;
    } catch {
      // The open failed, and its error went to the operation that started it: nothing to close.
      return;
    }
    await closeRedis(redis);
  }

  /** Runs an operation admitted now (before any later close), opening the connection at first use. */
  private run<T>(operation: (redis: Redis) => Promise<T>): Promise<T> {
    if (this.closed)
      return Promise.reject(new StoreClosedError(`RedisSessionStore(prefix ${JSON.stringify(this.prefix)})`));
    const running = this.connect().then(operation);
    this.inFlight.add(running);
    const forget = () => this.inFlight.delete(running);
    running.then(forget, forget);
    return running;
  }

  private connect(): Promise<Redis> {
    if (!this.opening) {
      const opening = openRedis(this.connection);
      this.opening = opening;
      // A failed open is not kept: the caller sees the error, and the next call tries again.
      opening.catch(() => {
        if (this.opening === opening) this.opening = null;
      });
    }
    return this.opening;
  }

  private at(sessionId: string): StoredAt {
    return { sessionId, location: `redis:${this.sessionKey(sessionId)}` };
  }
}
