import {
  type HandedOff,
  handOffId,
  StreamNotOpenError,
  type StreamStore,
  type StreamStoreOptions,
} from '../chat/stream-store';
import { runScript } from '../ledger/redis-script-call';
import { InvalidArgumentError } from '../state/errors';
import type { Message } from '../state/message';
import type { UIMessageChunk } from '../ui/ui-message';
import { assertKeyPrefix, chatKeys } from './redis-keys';
import { closeRedis, connectRedis, connectTimeout, type RedisHandle } from './redis-modules';
import { DEFAULT_SESSION_KEY_PREFIX } from './redis-session-store';
import { APPEND_SCRIPT, BEGIN_SCRIPT, END_SCRIPT, STEER_SCRIPT, STOP_SCRIPT } from './redis-stream-scripts';
import type { RedisConnection } from './redis-types';

export interface RedisStreamStoreOptions extends StreamStoreOptions {
  /** Where Redis is: ioredis options, a client or a Cluster (the store opens duplicates of it). */
  readonly connection: RedisConnection;
  /**
   * Prefix of every key (default `agent-machine:`): a chat's open stream id is
   * `<prefix>{<chatId>}:stream-active`, its chunks the Redis Stream
   * `<prefix>{<chatId>}:stream:<streamId>`; all of a chat's keys share its hash tag (one slot on
   * Redis Cluster, see redis-keys.ts).
   */
  readonly prefix?: string;
  /** How long a first connection may take before REDIS_UNREACHABLE, in ms (default 10,000). */
  readonly connectTimeoutMs?: number;
  /** How long one blocking read waits before it checks its signal again, in ms. Default 5,000. */
  readonly blockMs?: number;
}

/**
 * A StreamStore in Redis, for chats served by several processes (replicas, serverless functions)
 * or by the worker pool: each chat's current run is a Redis Stream (XADD as chunks come, XREAD
 * BLOCK to follow it), kept `ttlSeconds` after the run ends; which stream is open is a key with a
 * lease; a stop is a flag beside it and a message on `<prefix>stream-stop:<chatId>` (pub/sub), so
 * the process that runs the chat hears it at once. ioredis is loaded at first use.
 *
 * @example
 * const streams = new RedisStreamStore({ connection: { host: '127.0.0.1', port: 6379 } });
 * const handler = createChatHandler({ agent, streams });
 */
export class RedisStreamStore implements StreamStore {
  private readonly prefix: string;
  private readonly ttlSeconds: number;
  private readonly leaseMs: number;
  private readonly blockMs: number;
  private readonly connectTimeoutMs: number;
  private commands: Promise<RedisHandle> | null = null;
  private subscriber: Promise<RedisHandle> | null = null;
  private readonly readers = new Set<RedisHandle>();
  private readonly stopListeners = new Map<string, Set<() => void>>();
  private readonly steerListeners = new Map<string, Set<SteerListener>>();
  private closed = false;

  constructor(private readonly options: RedisStreamStoreOptions) {
    if (!options || typeof options.connection !== 'object' || options.connection === null)
      throw new InvalidArgumentError(
        'connection',
        'RedisStreamStore needs { connection } (ioredis options or a client)',
      );
    this.prefix = assertKeyPrefix('prefix', options.prefix ?? DEFAULT_SESSION_KEY_PREFIX);
    this.connectTimeoutMs = connectTimeout(options.connectTimeoutMs);
    this.ttlSeconds = positive('ttlSeconds', options.ttlSeconds, 3600);
    this.leaseMs = positive('leaseMs', options.leaseMs, 30_000);
    this.blockMs = positive('blockMs', options.blockMs, 5_000);
  }

  private redis(): Promise<RedisHandle> {
    if (this.closed) throw new InvalidArgumentError('RedisStreamStore', 'is closed');
    if (!this.commands) {
      const opening = this.open();
      this.commands = opening;
      // A failed open is not kept: the caller sees the error, and the next call tries again.
      opening.catch(() => {
        if (this.commands === opening) this.commands = null;
      });
    }
    return this.commands;
  }

  private open(): Promise<RedisHandle> {
    return connectRedis(this.options.connection, this.connectTimeoutMs);
  }

  private activeKey = (chatId: string) => chatKeys(this.prefix, chatId).active;
  private streamKey = (chatId: string, streamId: string) => chatKeys(this.prefix, chatId).stream(streamId);
  private stopFlagKey = (chatId: string, streamId: string) =>
    chatKeys(this.prefix, chatId).stopFlag(streamId);
  private stopChannelPrefix = () => `${this.prefix}stream-stop:`;
  private steerListKey = (chatId: string, streamId: string) =>
    chatKeys(this.prefix, chatId).steerList(streamId);
  private steerChannelPrefix = () => `${this.prefix}stream-steered:`;
  private handedOffKey = (chatId: string) => chatKeys(this.prefix, chatId).handedOff;
  /** The handed-off list of the key layout from before Redis Cluster: read and settled, no longer written. */
  private oldHandedOffKey = (chatId: string) => `${this.prefix}stream-handed-off:${chatId}`;

  async begin(chatId: string, streamId: string): Promise<boolean> {
    const redis = await this.redis();
    const claimed = await runScript(
      redis,
      BEGIN_SCRIPT,
      2,
      this.activeKey(chatId),
      this.streamKey(chatId, streamId),
      streamId,
      String(this.leaseMs),
    );
    return claimed === 1;
  }

  private async write(chatId: string, streamId: string, json: string): Promise<void> {
    const redis = await this.redis();
    const written = await runScript(
      redis,
      APPEND_SCRIPT,
      2,
      this.activeKey(chatId),
      this.streamKey(chatId, streamId),
      streamId,
      String(this.leaseMs),
      json,
    );
    if (written !== 1) throw new StreamNotOpenError(chatId, streamId);
  }

  async append(chatId: string, streamId: string, chunks: readonly UIMessageChunk[]): Promise<void> {
    if (chunks.length > 0) await this.write(chatId, streamId, JSON.stringify(chunks));
  }

  async renew(chatId: string, streamId: string): Promise<void> {
    await this.write(chatId, streamId, '');
  }

  async end(chatId: string, streamId: string): Promise<void> {
    const redis = await this.redis();
    await runScript(
      redis,
      END_SCRIPT,
      4,
      this.activeKey(chatId),
      this.streamKey(chatId, streamId),
      this.stopFlagKey(chatId, streamId),
      this.steerListKey(chatId, streamId),
      streamId,
      String(this.ttlSeconds),
    );
  }

  async active(chatId: string): Promise<string | null> {
    return (await this.redis()).get(this.activeKey(chatId));
  }

  async read(
    chatId: string,
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<AsyncIterable<UIMessageChunk> | null> {
    const streamId = await this.active(chatId);
    if (streamId === null) return null;
    const key = this.streamKey(chatId, streamId);
    const store = this;
    const { signal } = options;
    return {
      async *[Symbol.asyncIterator]() {
        // A blocking XREAD holds its connection: each reader has one of its own.
        const reader = await store.open();
        store.readers.add(reader);
        const abort = () => reader.disconnect();
        signal?.addEventListener('abort', abort, { once: true });
        try {
          let last = '0-0';
          let draining = false;
          for (;;) {
            if (signal?.aborted || store.closed) return;
            const reply = (await (draining
              ? reader.xread('COUNT', 1000, 'STREAMS', key, last)
              : reader.xread('COUNT', 100, 'BLOCK', store.blockMs, 'STREAMS', key, last))) as
              | [string, [string, string[]][]][]
              | null;
            if (reply === null) {
              if (draining) return;
              // Nothing for blockMs and the stream no longer open: its writer died (the lease ran
              // out). What it wrote last is read, then the stream ends here.
              draining = (await store.active(chatId)) !== streamId;
              continue;
            }
            for (const [id, fields] of reply[0]?.[1] ?? []) {
              last = id;
              if (fields[0] === 'end') return;
              if (fields[0] === 'c') for (const chunk of JSON.parse(fields[1] as string)) yield chunk;
            }
          }
        } catch (error) {
          if (signal?.aborted || store.closed) return;
          throw error;
        } finally {
          signal?.removeEventListener('abort', abort);
          store.readers.delete(reader);
          await closeRedis(reader).catch(() => reader.disconnect());
        }
      },
    };
  }

  async requestStop(chatId: string): Promise<boolean> {
    const redis = await this.redis();
    return this.onOpenStream(redis, chatId, (streamId) =>
      runScript(
        redis,
        STOP_SCRIPT,
        2,
        this.activeKey(chatId),
        this.stopFlagKey(chatId, streamId),
        streamId,
        this.stopChannelPrefix() + chatId,
      ),
    );
  }

  /**
   * Runs a script on the chat's open stream: it is read first, so that the script can declare that
   * stream's keys, and the script tries again with the stream it names as open (`{ 'moved', id }`).
   */
  private async onOpenStream(
    redis: RedisHandle,
    chatId: string,
    script: (streamId: string) => Promise<unknown>,
  ): Promise<boolean> {
    let streamId = await redis.get(this.activeKey(chatId));
    while (streamId !== null) {
      const reply = await script(streamId);
      if (typeof reply === 'string') return true;
      if (!Array.isArray(reply)) return false;
      streamId = String(reply[1]);
    }
    return false;
  }

  async onStop(chatId: string, streamId: string, listener: () => void): Promise<() => void> {
    const channel = this.stopChannelPrefix() + chatId;
    const subscriber = await this.subscribe();
    const key = `${chatId}\u0000${streamId}`;
    let listeners = this.stopListeners.get(key);
    if (!listeners) {
      listeners = new Set();
      this.stopListeners.set(key, listeners);
      await subscriber.subscribe(channel);
    }
    listeners.add(listener);
    // A stop asked before this subscription left its flag.
    if ((await (await this.redis()).exists(this.stopFlagKey(chatId, streamId))) === 1) listener();
    return () => {
      listeners.delete(listener);
      if (listeners.size === 0 && this.stopListeners.get(key) === listeners) {
        this.stopListeners.delete(key);
        const stillHeard = [...this.stopListeners.keys()].some((k) => k.startsWith(`${chatId}\u0000`));
        if (!stillHeard) void subscriber.unsubscribe(channel).catch(() => undefined);
      }
    };
  }

  async steer(chatId: string, message: Message): Promise<boolean> {
    const redis = await this.redis();
    const json = JSON.stringify(message);
    return this.onOpenStream(redis, chatId, (streamId) =>
      runScript(
        redis,
        STEER_SCRIPT,
        3,
        this.activeKey(chatId),
        this.handedOffKey(chatId),
        this.steerListKey(chatId, streamId),
        streamId,
        this.steerChannelPrefix() + chatId,
        json,
      ),
    );
  }

  async onSteer(chatId: string, streamId: string, listener: (message: Message) => void): Promise<() => void> {
    const channel = this.steerChannelPrefix() + chatId;
    const subscriber = await this.subscribe();
    const key = `${chatId}\u0000${streamId}`;
    let listeners = this.steerListeners.get(key);
    if (!listeners) {
      listeners = new Set();
      this.steerListeners.set(key, listeners);
      await subscriber.subscribe(channel);
    }
    const entry: SteerListener = { listener, delivered: 0, draining: Promise.resolve() };
    listeners.add(entry);
    // the messages steered before this subscription are in the list already
    await this.drainSteered(chatId, streamId, entry);
    return () => {
      listeners.delete(entry);
      if (listeners.size === 0 && this.steerListeners.get(key) === listeners) {
        this.steerListeners.delete(key);
        const stillHeard = [...this.steerListeners.keys()].some((k) => k.startsWith(`${chatId}\u0000`));
        if (!stillHeard) void subscriber.unsubscribe(channel).catch(() => undefined);
      }
    };
  }

  async handedOff(chatId: string): Promise<readonly HandedOff[]> {
    const redis = await this.redis();
    // the old layout's list first: what it holds was handed off before the upgrade
    const [old, entries] = await Promise.all([
      redis.lrange(this.oldHandedOffKey(chatId), 0, -1),
      redis.lrange(this.handedOffKey(chatId), 0, -1),
    ]);
    return [...old, ...entries].map((json) => JSON.parse(json) as HandedOff);
  }

  async settle(chatId: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const redis = await this.redis();
    const settled = new Set(ids);
    // one key at a time: on a Cluster the old layout's list is in another slot
    for (const key of [this.oldHandedOffKey(chatId), this.handedOffKey(chatId)]) {
      const entries = await redis.lrange(key, 0, -1);
      const gone = entries.filter((json) => settled.has(handOffId((JSON.parse(json) as HandedOff).message)));
      if (gone.length === 0) continue;
      const removal = redis.multi();
      for (const json of gone) removal.lrem(key, 1, json);
      await removal.exec();
    }
  }

  /** Gives `entry` the steered messages it has not had yet, one read at a time (each message once). */
  private drainSteered(chatId: string, streamId: string, entry: SteerListener): Promise<void> {
    // after a read that failed (logged by its caller) too: the next read takes what it missed
    entry.draining = entry.draining
      .catch(() => undefined)
      .then(async () => {
        if (this.closed) return;
        const list = this.steerListKey(chatId, streamId);
        const messages = await (await this.redis()).lrange(list, entry.delivered, -1);
        entry.delivered += messages.length;
        for (const json of messages) entry.listener(JSON.parse(json) as Message);
      });
    return entry.draining;
  }

  private subscribe(): Promise<RedisHandle> {
    this.subscriber ??= this.open().then((subscriber) => {
      subscriber.on('message', (channel: string, streamId: string) => {
        if (channel.startsWith(this.steerChannelPrefix())) {
          const chatId = channel.slice(this.steerChannelPrefix().length);
          for (const entry of [...(this.steerListeners.get(`${chatId}\u0000${streamId}`) ?? [])])
            void this.drainSteered(chatId, streamId, entry).catch((error: unknown) =>
              console.error(`RedisStreamStore: steered messages of chat "${chatId}" not read`, error),
            );
          return;
        }
        const chatId = channel.slice(this.stopChannelPrefix().length);
        for (const listener of [...(this.stopListeners.get(`${chatId}\u0000${streamId}`) ?? [])]) listener();
      });
      return subscriber;
    });
    const opening = this.subscriber;
    // A failed open is not kept (as for the commands' connection).
    opening.catch(() => {
      if (this.subscriber === opening) this.subscriber = null;
    });
    return opening;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const reader of this.readers) reader.disconnect();
    this.stopListeners.clear();
    this.steerListeners.clear();
    const connections = await Promise.all([this.commands, this.subscriber].filter((c) => c !== null));
    await Promise.all(connections.map((c) => closeRedis(c)));
  }
}

/** A steer listener and how many of the stream's steered messages it has had. */
interface SteerListener {
  readonly listener: (message: Message) => void;
  delivered: number;
  draining: Promise<void>;
}

function positive(name: string, value: number | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < 1)
    throw new InvalidArgumentError(name, `${value} is not a whole number >= 1`);
  return value;
}
