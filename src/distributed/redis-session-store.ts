import { runScript } from '../ledger/redis-script-call';
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
import { assertKeyPrefix, type SessionKeys, sessionKeys } from './redis-keys';
import { closeRedis, connectRedis, connectTimeout, type RedisHandle } from './redis-modules';
import { deleteSession, listSessionIds, moveOldLayout } from './redis-session-layout';
import { FORK_DOCUMENT_SCRIPT, FORK_SCRIPT, LOAD_SCRIPT, SAVE_SCRIPT } from './redis-session-scripts';
import type { RedisConnection } from './redis-types';

/** The prefix of the store's keys when none is given. */
export const DEFAULT_SESSION_KEY_PREFIX = 'agent-machine:';

/** A session lock a save is conditional on (FENCE): its key, and the token its holder put there. */
type Fence = { readonly key: string; readonly token: string };

/** A save script's reply: `ok`, `conflict` with the stored version, `stale`, `absent`, `fenced` or `corrupt`. */
type Reply = [string, string?];

export interface RedisSessionStoreOptions {
  /** Where Redis is: ioredis options, a client or a Cluster (the store opens a duplicate of it). */
  readonly connection: RedisConnection;
  /**
   * Prefix of every key (default `agent-machine:`): a session's keys are
   * `<prefix>{<id>}:journal`, `<prefix>{<id>}:snapshot` (and `<prefix>{<id>}:session` before the
   * journal), their hash tag `{<id>}` the session's (see redis-keys.ts). Stores with different
   * prefixes do not see each other's sessions.
   */
  readonly prefix?: string;
  /** How long the first connection may take before REDIS_UNREACHABLE, in ms (default 10,000). */
  readonly connectTimeoutMs?: number;
  /**
   * Retention of idle sessions: a session not saved for this many seconds is removed by Redis (its
   * keys expire; each save sets the time again). Default: none, sessions are kept until deleted.
   */
  readonly idleTtlSeconds?: number;
}

/**
 * A SessionStore in Redis, for agents that run on several machines (see createAgentWorker). Each
 * session is a journal (JOURNAL_FORMAT.md): the list `<prefix>{<id>}:journal`, one record per
 * checkpoint holding what changed since the previous one. A save is one Lua script over that
 * session's keys alone, which checks the stored version and appends, so the optimistic version
 * check holds across every process sharing the Redis server. Works on Redis Cluster as it is: a
 * session's keys share the hash tag `{<id>}` (one slot), sessions spread over the masters, and
 * `list()` scans each master. Sessions under the key layout from before (`<prefix>journal:<id>`,
 * `<prefix>session:<id>`, indexed in `<prefix>sessions`) load as they are and move to the new keys
 * at their first touch. ioredis is loaded and the connection opened at first use (`npm install
 * ioredis`); a Redis not reached within `connectTimeoutMs` fails the operation with
 * REDIS_UNREACHABLE.
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
  private readonly connectTimeoutMs: number;
  private readonly idleTtl: string;
  private opening: Promise<RedisHandle> | null = null;
  private closed = false;
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly tips = new TipCache();

  constructor(options: RedisSessionStoreOptions) {
    if (!options || typeof options !== 'object' || !options.connection)
      throw new InvalidArgumentError(
        'options.connection',
        'expected ioredis options ({ host, port }), an ioredis client or an ioredis Cluster',
      );
    this.connection = options.connection;
    this.prefix = assertKeyPrefix('options.prefix', options.prefix ?? DEFAULT_SESSION_KEY_PREFIX);
    this.connectTimeoutMs = connectTimeout(options.connectTimeoutMs);
    const ttl = options.idleTtlSeconds;
    if (ttl !== undefined && (!Number.isSafeInteger(ttl) || ttl < 1))
      throw new InvalidArgumentError('options.idleTtlSeconds', `${ttl} is not a positive integer (seconds)`);
    this.idleTtl = ttl === undefined ? '' : String(ttl);
  }

  /** The keys of a session (all in its slot): its journal, snapshot position and document from before the journal. */
  keys(sessionId: string): SessionKeys {
    return sessionKeys(this.prefix, assertSessionId(sessionId));
  }

  /** The Redis key of a session's document from before the journal (read, and replaced at its next save). */
  sessionKey(sessionId: string): string {
    return this.keys(sessionId).document;
  }

  /**
   * The Redis key of the sorted set that indexed session ids in the key layout from before Redis
   * Cluster (read by `list()`; no longer written).
   * @deprecated `list()` scans the session keys of each master; the index is only read.
   */
  indexKey(): string {
    return `${this.prefix}sessions`;
  }

  /** The Redis key of a session's journal (a list of records, JOURNAL_FORMAT.md). */
  journalKey(sessionId: string): string {
    return this.keys(sessionId).journal;
  }

  load(sessionId: string): Promise<LoadedSession | null> {
    return this.run(async (redis) => {
      const id = assertSessionId(sessionId);
      // Forgotten first: after a load that fails, the next save writes the whole state again.
      this.tips.delete(id);
      const keys = this.keys(id);
      for (let attempt = 0; ; attempt++) {
        const [outcome, found] = (await runScript(
          redis,
          LOAD_SCRIPT,
          3,
          keys.journal,
          keys.snapshot,
          keys.document,
        )) as [string, string[] | string | undefined];
        if (outcome === 'none') {
          if (attempt === 0 && (await moveOldLayout(redis, this.prefix, id))) continue;
          return null;
        }
        if (outcome === 'document') return decodeSessionDocument(found as string, this.legacyAt(id));
        if (outcome !== 'ok')
          throw new CorruptSessionError(
            id,
            `the newest snapshot position (${keys.snapshot}) is ${found === '' ? 'missing' : JSON.stringify(found)}, not a position in the journal`,
            this.at(id).location,
          );
        const replayed = replayRecords(found as string[], this.at(id));
        this.tips.set(id, replayed.tip);
        return { state: replayed.state, version: replayed.version };
      }
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
      let reply = await this.append(redis, id, expectedVersion, next, false, fence);
      // Nothing under the new keys: the session may be in the old layout (moved now), or new.
      if (reply[0] === 'absent') {
        await moveOldLayout(redis, this.prefix, id);
        reply = await this.append(redis, id, expectedVersion, next, true, fence);
      }
      // The stored head is not the one this store remembers: the whole state goes in a snapshot.
      if (reply[0] === 'stale') {
        next = nextRecord(null, state, version);
        reply = await this.append(redis, id, expectedVersion, next, true, fence);
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
      const stored = await this.stored(redis, id);
      if (stored === null) return [];
      if ('records' in stored) return checkpointsOf(stored.records, this.at(id));
      const { state, version } = decodeSessionDocument(stored.document, this.legacyAt(id));
      return [{ version, stepNumber: state.stepCount(), savedAt: savedAtOf(stored.document) }];
    });
  }

  loadCheckpoint(sessionId: string, version: number): Promise<LoadedSession | null> {
    return this.run(async (redis) => {
      const id = assertSessionId(sessionId);
      assertVersion(version);
      const stored = await this.stored(redis, id);
      if (stored === null) return null;
      if ('records' in stored)
        return { state: replayRecords(stored.records, this.at(id), version).state, version };
      const loaded = decodeSessionDocument(stored.document, this.legacyAt(id));
      if (loaded.version !== version) throw new CheckpointNotFoundError(id, version);
      return loaded;
    });
  }

  fork(sessionId: string, version: number, newSessionId: string): Promise<LoadedSession> {
    return this.run(async (redis) => {
      const id = assertSessionId(sessionId);
      const target = assertSessionId(newSessionId);
      assertVersion(version);
      const stored = await this.stored(redis, id);
      if (stored === null) throw new SessionNotFoundError(id);
      // The fork's id may be taken in the old layout: it is moved first, and then refused.
      await moveOldLayout(redis, this.prefix, target);
      const keys = this.keys(target);
      let loaded: LoadedSession;
      let copied: unknown;
      if ('document' in stored) {
        // A session from before the journal: its document is copied as it is.
        loaded = decodeSessionDocument(stored.document, this.legacyAt(id));
        if (loaded.version !== version) throw new CheckpointNotFoundError(id, version);
        copied = await runScript(
          redis,
          FORK_DOCUMENT_SCRIPT,
          2,
          keys.journal,
          keys.document,
          stored.document,
        );
      } else {
        loaded = { state: replayRecords(stored.records, this.at(id), version).state, version };
        const fork = forkRecords(stored.records, version, this.at(id));
        copied = await runScript(
          redis,
          FORK_SCRIPT,
          3,
          keys.journal,
          keys.document,
          keys.snapshot,
          String(fork.kept),
          ...stored.records.slice(0, fork.kept),
          ...fork.texts.slice(fork.kept),
        );
      }
      if (copied !== 1) {
        const existing = await this.load(target);
        throw new SessionConflictError(target, null, existing?.version ?? null);
      }
      if (this.idleTtl !== '')
        for (const key of [keys.journal, keys.snapshot, keys.document])
          await redis.expire(key, Number(this.idleTtl));
      return loaded;
    });
  }

  delete(sessionId: string): Promise<void> {
    return this.run(async (redis) => {
      const id = assertSessionId(sessionId);
      this.tips.delete(id);
      await deleteSession(redis, this.prefix, id);
    });
  }

  /** Every session id, sorted: the session keys of each master, and the old layout's index. */
  list(): Promise<string[]> {
    return this.run((redis) => listSessionIds(redis, this.prefix));
  }

  private async append(
    redis: RedisHandle,
    id: string,
    expectedVersion: number | null,
    next: NextRecord,
    oldLayoutChecked: boolean,
    fence: Fence | null,
  ): Promise<Reply> {
    const { journal, document, snapshot } = this.keys(id);
    const keys = [journal, document, snapshot];
    const args = [
      expectedVersion === null ? '' : String(expectedVersion),
      next.text,
      next.kind,
      next.kind === 'delta' ? next.gen : '',
      oldLayoutChecked ? '1' : '',
      this.idleTtl,
    ];
    // FENCE: the lock's key (in the session's slot) joins the keys, its token the arguments
    if (fence)
      return (await runScript(redis, SAVE_SCRIPT, 4, ...keys, fence.key, ...args, fence.token)) as Reply;
    return (await runScript(redis, SAVE_SCRIPT, 3, ...keys, ...args)) as Reply;
  }

  /** The stored records (or document from before the journal) of a session, or null. */
  private async stored(
    redis: RedisHandle,
    id: string,
  ): Promise<{ readonly records: string[] } | { readonly document: string } | null> {
    const keys = this.keys(id);
    for (let attempt = 0; ; attempt++) {
      const records = await redis.lrange(keys.journal, 0, -1);
      if (records.length > 0) return { records };
      const document = await redis.get(keys.document);
      if (document !== null) return { document };
      if (attempt > 0 || !(await moveOldLayout(redis, this.prefix, id))) return null;
    }
  }

  /** Waits for the operations in flight, then closes the store's connection. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.inFlight]);
    const opening = this.opening;
    this.opening = null;
    if (!opening) return;
    let redis: RedisHandle;
    try {
      redis = await opening;
    } catch {
      // The open failed, and its error went to the operation that started it: nothing to close.
      return;
    }
    await closeRedis(redis);
  }

  /** Runs an operation admitted now (before any later close), opening the connection at first use. */
  private run<T>(operation: (redis: RedisHandle) => Promise<T>): Promise<T> {
    if (this.closed)
      return Promise.reject(new StoreClosedError(`RedisSessionStore(prefix ${JSON.stringify(this.prefix)})`));
    const running = this.connect().then(operation);
    this.inFlight.add(running);
    const forget = () => this.inFlight.delete(running);
    running.then(forget, forget);
    return running;
  }

  private connect(): Promise<RedisHandle> {
    if (!this.opening) {
      const opening = connectRedis(this.connection, this.connectTimeoutMs);
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
