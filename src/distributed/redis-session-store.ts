import type { Redis } from 'ioredis';
import {
  CheckpointNotFoundError,
  CorruptSessionError,
  SessionConflictError,
  SessionNotFoundError,
  StoreClosedError,
} from '../persistence/errors';
import type { Checkpoint, JournaledSessionStore } from '../persistence/journal/checkpoint';
import { assertVersion, checkpointsOf, forkRecords, replayRecords } from '../persistence/journal/journal-log';
import { type NextRecord, nextRecord } from '../persistence/journal/journal-writer';
import { TipCache } from '../persistence/journal/tip-cache';
import {
  decodeSessionDocument,
  type StoredAt,
  savedAtOf,
  storedVersion,
} from '../persistence/session-document';
import { assertSessionId } from '../persistence/session-id';
import type { LoadedSession } from '../persistence/session-store';
import { assertExpectedVersion, assertState } from '../persistence/store-arguments';
import type { AgentState } from '../state/agent-state';
import { InvalidArgumentError } from '../state/errors';
import { SessionLockLostError } from './errors';
import { closeRedis, openRedis } from './redis-modules';
import type { RedisConnection } from './redis-types';

/** The prefix of the store's keys when none is given. */
export const DEFAULT_SESSION_KEY_PREFIX = 'agent-machine:';

/**
 * The check-and-append of a save, atomic because Redis runs a script alone. The stored version is
 * read from the head of the newest journal record (`{"journal":1,"v":N,"gen":"…"`), or, for a
 * session saved before the journal, from its document (which the append then replaces). KEYS: the
 * journal list, the document from before the journal, the index, the newest snapshot's position.
 * ARGV: the expected version ('' for none), the record, the session id, the record's kind, the
 * generation a delta continues ('' for a snapshot). Replies `{ 'ok' }`, `{ 'conflict', version }`,
 * `{ 'stale' }` (a delta whose base is not the stored head: send a snapshot) or `{ 'corrupt' }`.
 */
const SAVE_SCRIPT = `
local actual = ''
local gen = ''
local length = redis.call('LLEN', KEYS[1])
local legacy = false
if length > 0 then
  local head = string.sub(redis.call('LINDEX', KEYS[1], -1), 1, 200)
  actual, gen = string.match(head, '^{"journal":%d+,"v":(%d+),"gen":"([^"]*)"')
  if not actual then return {'corrupt'} end
elseif redis.call('EXISTS', KEYS[2]) == 1 then
  legacy = true
  local head = redis.call('GETRANGE', KEYS[2], 0, 63)
  actual = string.match(head, '^{"version":([1-9][0-9]*),')
  if not actual then
    local ok, doc = pcall(cjson.decode, redis.call('GET', KEYS[2]))
    local v = ok and type(doc) == 'table' and doc['version']
    if type(v) ~= 'number' or v < 1 or v % 1 ~= 0 then return {'corrupt'} end
    actual = string.format('%.0f', v)
  end
end
if actual ~= ARGV[1] then return {'conflict', actual} end
-- fencing (FENCE): a save given a session lock (KEYS[5]) writes only while it holds the token ARGV[6]
if KEYS[5] and redis.call('GET', KEYS[5]) ~= ARGV[6] then return {'fenced'} end
if ARGV[4] == 'delta' and gen ~= ARGV[5] then return {'stale'} end
redis.call('RPUSH', KEYS[1], ARGV[2])
if ARGV[4] == 'snapshot' then redis.call('SET', KEYS[4], length) end
if legacy then redis.call('DEL', KEYS[2]) end
redis.call('ZADD', KEYS[3], 0, ARGV[3])
return {'ok'}
`;

/** A session lock a save is conditional on (FENCE): its key, and the token its holder put there. */
type Fence = { readonly key: string; readonly token: string };

/**
 * Reads what a load needs in one step: the records from the newest snapshot on. KEYS: the journal,
 * the snapshot position. Replies `{ 'ok', records }`, `{ 'none' }` (no journal: perhaps a document
 * from before the journal) or `{ 'position', position }` when the position is missing, not a
 * whole number, or not in the list (damage: a save always sets it with the first record).
 */
const LOAD_SCRIPT = `
local length = redis.call('LLEN', KEYS[1])
if length == 0 then return {'none'} end
local position = redis.call('GET', KEYS[2])
local from = position and string.match(position, '^%d+$') and tonumber(position)
if not from or from >= length then return {'position', position or ''} end
return {'ok', redis.call('LRANGE', KEYS[1], from, -1)}
`;

/**
 * Makes a fork: the first records of a journal copied inside Redis, then the fork's newest
 * snapshot and the deltas after it (under a generation of its own) given. KEYS: the source
 * journal, the fork's journal, the fork's document key from before the journal, its snapshot
 * position, the index. ARGV: how many records to copy (the position of the fork's snapshot), the
 * fork's id, then the records given.
 */
const FORK_SCRIPT = `
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
local kept = tonumber(ARGV[1])
if kept > 0 then
  for _, record in ipairs(redis.call('LRANGE', KEYS[1], 0, kept - 1)) do redis.call('RPUSH', KEYS[2], record) end
end
for i = 3, #ARGV do redis.call('RPUSH', KEYS[2], ARGV[i]) end
redis.call('SET', KEYS[4], ARGV[1])
redis.call('ZADD', KEYS[5], 0, ARGV[2])
return 1
`;

/** Copies a document from before the journal. KEYS: the document, the fork's journal, its document, the index; ARGV: the fork's id. */
const FORK_DOCUMENT_SCRIPT = `
if redis.call('EXISTS', KEYS[2]) == 1 or redis.call('EXISTS', KEYS[3]) == 1 then return 0 end
redis.call('SET', KEYS[3], redis.call('GET', KEYS[1]))
redis.call('ZADD', KEYS[4], 0, ARGV[1])
return 1
`;

/** KEYS: the journal, the document from before the journal, the snapshot position, the index; ARGV: the session id. */
const DELETE_SCRIPT = `
redis.call('DEL', KEYS[1], KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[1])
return 1
`;

export interface RedisSessionStoreOptions {
  /** Where Redis is: ioredis options, or a client (the store opens a duplicate of it). */
  readonly connection: RedisConnection;
  /**
   * Prefix of every key (default `agent-machine:`): sessions are `<prefix>journal:<id>` (and
   * `<prefix>journal-snapshot:<id>`; `<prefix>session:<id>` before the journal), the index of ids
   * is `<prefix>sessions`. Stores with different prefixes do not see each other's sessions.
   */
  readonly prefix?: string;
}

/**
 * A SessionStore in Redis, for agents that run on several machines (see createAgentWorker). Each
 * session is a journal (JOURNAL_FORMAT.md): the list `<prefix>journal:<id>`, one record per
 * checkpoint holding what changed since the previous one; a sorted set indexes the ids for
 * `list()`. A save is one Lua script that checks the stored version and appends, so the optimistic
 * version check holds across every process sharing the Redis server. Sessions saved before the
 * journal (the string `<prefix>session:<id>`) load as they are and move to the journal at their
 * next save. ioredis is loaded and the connection opened at first use (`npm install ioredis`).
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
export class RedisSessionStore implements JournaledSessionStore {
  readonly prefix: string;
  private readonly connection: RedisConnection;
  private opening: Promise<Redis> | null = null;
  private closed = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly tips = new TipCache();

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

  /** The Redis key of a session's document from before the journal (read, and replaced at its next save). */
  sessionKey(sessionId: string): string {
    return `${this.prefix}session:${sessionId}`;
  }

  /** The Redis key of the sorted set of stored session ids. */
  indexKey(): string {
    return `${this.prefix}sessions`;
  }

  /** The Redis key of a session's journal (a list of records, JOURNAL_FORMAT.md). */
  journalKey(sessionId: string): string {
    return `${this.prefix}journal:${sessionId}`;
  }

  private snapshotKey(sessionId: string): string {
    return `${this.prefix}journal-snapshot:${sessionId}`;
  }

  load(sessionId: string): Promise<LoadedSession | null> {
    return this.run(async (redis) => {
      const id = assertSessionId(sessionId);
      // Forgotten first: after a load that fails, the next save writes the whole state again.
      this.tips.delete(id);
      const [outcome, found] = (await redis.eval(
        LOAD_SCRIPT,
        2,
        this.journalKey(id),
        this.snapshotKey(id),
      )) as [string, string[] | string | undefined];
      if (outcome === 'none') {
        const text = await redis.get(this.sessionKey(id));
        return text === null ? null : decodeSessionDocument(text, this.legacyAt(id));
      }
      if (outcome !== 'ok')
        throw new CorruptSessionError(
          id,
          `the newest snapshot position (${this.snapshotKey(id)}) is ${found === '' ? 'missing' : JSON.stringify(found)}, not a position in the journal`,
          this.at(id).location,
        );
      const replayed = replayRecords(found as string[], this.at(id));
      this.tips.set(id, replayed.tip);
      return { state: replayed.state, version: replayed.version };
    });
  }

  save(sessionId: string, state: AgentState, expectedVersion: number | null): Promise<number> {
    return this.saveFenced(sessionId, state, expectedVersion, null);
  }

  /**
   * `save`, written only while the session lock `fence.key` (in this Redis) holds `fence.token`,
   * checked in the save's own script: else SessionLockLostError (SESSION_LOCK_LOST), nothing
   * written. A worker's checkpoints go through it, so a worker that lost its lock cannot save.
   */
  fencedSave(
    sessionId: string,
    state: AgentState,
    expectedVersion: number | null,
    fence: Fence,
  ): Promise<number> {
    return this.saveFenced(sessionId, state, expectedVersion, fence);
  }

  private saveFenced(
    sessionId: string,
    state: AgentState,
    expectedVersion: number | null,
    fence: Fence | null,
  ): Promise<number> {
    return this.run(async (redis) => {
      const id = assertSessionId(sessionId);
      assertState(state);
      assertExpectedVersion(expectedVersion);
      const version = (expectedVersion ?? 0) + 1;
      const cached = this.tips.peek(id);
      let next = nextRecord(cached?.version === expectedVersion ? cached : null, state, version);
      let reply = await this.append(redis, id, expectedVersion, next, fence);
      // The stored head is not the one this store remembers: the whole state goes in a snapshot.
      if (reply[0] === 'stale') {
        next = nextRecord(null, state, version);
        reply = await this.append(redis, id, expectedVersion, next, fence);
      }
      if (reply[0] === 'fenced')
        throw new SessionLockLostError(id, 'a save was refused: another holder has it, or it expired');
      if (reply[0] === 'ok') {
        this.tips.set(id, next.commit());
        return version;
      }
      if (reply[0] === 'conflict') {
        const actual = reply[1] === '' || reply[1] === undefined ? null : Number(reply[1]);
        throw new SessionConflictError(id, expectedVersion, actual);
      }
      // The stored version cannot be read: name what is wrong as the other stores do.
      const text = (await redis.get(this.sessionKey(id))) ?? '';
      storedVersion(text, this.legacyAt(id));
      throw new CorruptSessionError(id, 'the stored version cannot be read', this.at(id).location);
    });
  }

  checkpoints(sessionId: string): Promise<Checkpoint[]> {
    return this.run(async (redis) => {
      const id = assertSessionId(sessionId);
      const texts = await redis.lrange(this.journalKey(id), 0, -1);
      if (texts.length > 0) return checkpointsOf(texts, this.at(id));
      const text = await redis.get(this.sessionKey(id));
      if (text === null) return [];
      const { state, version } = decodeSessionDocument(text, this.legacyAt(id));
      return [{ version, stepNumber: state.stepCount(), savedAt: savedAtOf(text) }];
    });
  }

  loadCheckpoint(sessionId: string, version: number): Promise<LoadedSession | null> {
    return this.run(async (redis) => {
      const id = assertSessionId(sessionId);
      assertVersion(version);
      const texts = await redis.lrange(this.journalKey(id), 0, -1);
      if (texts.length > 0) return { state: replayRecords(texts, this.at(id), version).state, version };
      const text = await redis.get(this.sessionKey(id));
      if (text === null) return null;
      const loaded = decodeSessionDocument(text, this.legacyAt(id));
      if (loaded.version !== version) throw new CheckpointNotFoundError(id, version);
      return loaded;
    });
  }

  fork(sessionId: string, version: number, newSessionId: string): Promise<LoadedSession> {
    return this.run(async (redis) => {
      const id = assertSessionId(sessionId);
      const target = assertSessionId(newSessionId);
      assertVersion(version);
      const texts = await redis.lrange(this.journalKey(id), 0, -1);
      if (texts.length === 0) {
        // A session from before the journal: its document is copied as it is.
        const loaded = await this.loadCheckpoint(id, version);
        if (!loaded) throw new SessionNotFoundError(id);
        const copied = await redis.eval(
          FORK_DOCUMENT_SCRIPT,
          4,
          this.sessionKey(id),
          this.journalKey(target),
          this.sessionKey(target),
          this.indexKey(),
          target,
        );
        if (copied !== 1) {
          const existing = await this.load(target);
          throw new SessionConflictError(target, null, existing?.version ?? null);
        }
        return loaded;
      }
      const { state } = replayRecords(texts, this.at(id), version);
      const fork = forkRecords(texts, version, this.at(id));
      const copied = await redis.eval(
        FORK_SCRIPT,
        5,
        this.journalKey(id),
        this.journalKey(target),
        this.sessionKey(target),
        this.snapshotKey(target),
        this.indexKey(),
        String(fork.kept),
        target,
        ...fork.texts.slice(fork.kept),
      );
      if (copied !== 1) {
        const existing = await this.load(target);
        throw new SessionConflictError(target, null, existing?.version ?? null);
      }
      return { state, version };
    });
  }

  delete(sessionId: string): Promise<void> {
    return this.run(async (redis) => {
      const id = assertSessionId(sessionId);
      this.tips.delete(id);
      await redis.eval(
        DELETE_SCRIPT,
        4,
        this.journalKey(id),
        this.sessionKey(id),
        this.snapshotKey(id),
        this.indexKey(),
        id,
      );
    });
  }

  private async append(
    redis: Redis,
    id: string,
    expectedVersion: number | null,
    next: NextRecord,
    fence: Fence | null = null,
  ) {
    const keys = [this.journalKey(id), this.sessionKey(id), this.indexKey(), this.snapshotKey(id)];
    const args = [
      expectedVersion === null ? '' : String(expectedVersion),
      next.text,
      id,
      next.kind,
      next.kind === 'delta' ? next.gen : '',
    ];
    // FENCE: the lock's key joins the keys, its token the arguments
    if (fence)
      return (await redis.eval(SAVE_SCRIPT, 5, ...keys, fence.key, ...args, fence.token)) as [
        string,
        string?,
      ];
    return (await redis.eval(SAVE_SCRIPT, 4, ...keys, ...args)) as [string, string?];
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
    return { sessionId, location: `redis:${this.journalKey(sessionId)}` };
  }

  private legacyAt(sessionId: string): StoredAt {
    return { sessionId, location: `redis:${this.sessionKey(sessionId)}` };
  }
}
