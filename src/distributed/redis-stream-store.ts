import type { Redis } from 'ioredis';
import { InvalidArgumentError } from '../state/errors';
import type { Message } from '../state/message';
import {
  type HandedOff,
  handOffId,
  StreamNotOpenError,
  type StreamStore,
  type StreamStoreOptions,
} from '../ui/stream-store';
import type { UIMessageChunk } from '../ui/ui-message';
import { closeRedis, openRedis } from './redis-modules';
import { DEFAULT_SESSION_KEY_PREFIX } from './redis-session-store';
import type { RedisConnection } from './redis-types';

/** KEYS: the chat's active-stream key, the new stream's key. ARGV: stream id, lease ms. Replies 1 (claimed) or 0. */
const BEGIN_SCRIPT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
redis.call('DEL', KEYS[2])
return 1
`;

/** KEYS: active key, stream key. ARGV: stream id, lease ms, the chunks' JSON ('' for a renew). Replies 1, or 0 when not the open stream. */
const APPEND_SCRIPT = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
if ARGV[3] ~= '' then
  redis.call('XADD', KEYS[2], '*', 'c', ARGV[3])
  redis.call('PEXPIRE', KEYS[2], ARGV[2] + 60000)
end
return 1
`;

/**
 * KEYS: active key, the chat's handed-off list; ARGV: the key prefix of steer lists, the steer
 * channel prefix, the chat id, the message's JSON. Replies the stream id or false. The handed-off
 * list has no expiry: it holds a message until a run settles it.
 */
const STEER_SCRIPT = `
local id = redis.call('GET', KEYS[1])
if not id then return false end
redis.call('RPUSH', KEYS[2], '{"streamId":' .. cjson.encode(id) .. ',"message":' .. ARGV[4] .. '}')
redis.call('RPUSH', ARGV[1] .. id, ARGV[4])
redis.call('PEXPIRE', ARGV[1] .. id, redis.call('PTTL', KEYS[1]) + 60000)
redis.call('PUBLISH', ARGV[2] .. ARGV[3], id)
return id
`;

/**
 * KEYS: active key, stream key, stop flag, steer list. ARGV: stream id, ttl seconds. The end mark is written
 * even when the lease ran out, so that readers of the stream finish.
 */
const END_SCRIPT = `
local open = redis.call('GET', KEYS[1]) == ARGV[1]
if open or redis.call('EXISTS', KEYS[2]) == 1 then
  redis.call('XADD', KEYS[2], '*', 'end', '1')
  redis.call('EXPIRE', KEYS[2], ARGV[2])
end
if open then redis.call('DEL', KEYS[1]) end
redis.call('DEL', KEYS[3], KEYS[4])
return 1
`;

/** KEYS: active key; ARGV: the key prefix of stop flags, the stop channel prefix, the chat id. Replies the stream id or false. */
const STOP_SCRIPT = `
local id = redis.call('GET', KEYS[1])
if not id then return false end
redis.call('SET', ARGV[1] .. id, '1', 'PX', redis.call('PTTL', KEYS[1]) + 60000)
redis.call('PUBLISH', ARGV[2] .. ARGV[3], id)
return id
`;

export interface RedisStreamStoreOptions extends StreamStoreOptions {
  /** Where Redis is: ioredis options, or a client (the store opens duplicates of it). */
  readonly connection: RedisConnection;
  /**
   * Prefix of every key (default `agent-machine:`): a chat's open stream id is
   * `<prefix>stream-active:<chatId>`, its chunks the Redis Stream `<prefix>stream:<chatId>:<streamId>`.
   */
  readonly prefix?: string;
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
  private commands: Promise<Redis> | null = null;
  private subscriber: Promise<Redis> | null = null;
  private readonly readers = new Set<Redis>();
  private readonly stopListeners = new Map<string, Set<() => void>>();
  private readonly steerListeners = new Map<string, Set<SteerListener>>();
  private closed = false;

  constructor(private readonly options: RedisStreamStoreOptions) {
    if (!options || typeof options.connection !== 'object' || options.connection === null)
      throw new InvalidArgumentError(
        'connection',
        'RedisStreamStore needs { connection } (ioredis options or a client)',
      );
    this.prefix = options.prefix ?? DEFAULT_SESSION_KEY_PREFIX;
    this.ttlSeconds = positive('ttlSeconds', options.ttlSeconds, 3600);
    this.leaseMs = positive('leaseMs', options.leaseMs, 30_000);
    this.blockMs = positive('blockMs', options.blockMs, 5_000);
  }

  private redis(): Promise<Redis> {
    if (this.closed) throw new InvalidArgumentError('RedisStreamStore', 'is closed');
    this.commands ??= openRedis(this.options.connection);
    return this.commands;
  }

  private activeKey = (chatId: string) => `${this.prefix}stream-active:${chatId}`;
  private streamKey = (chatId: string, streamId: string) => `${this.prefix}stream:${chatId}:${streamId}`;
  private stopFlagPrefix = (chatId: string) => `${this.prefix}stream-stop:${chatId}:`;
  private stopChannelPrefix = () => `${this.prefix}stream-stop:`;
  private steerListPrefix = (chatId: string) => `${this.prefix}stream-steer:${chatId}:`;
  private steerChannelPrefix = () => `${this.prefix}stream-steered:`;
  private handedOffKey = (chatId: string) => `${this.prefix}stream-handed-off:${chatId}`;

  async begin(chatId: string, streamId: string): Promise<boolean> {
    const redis = await this.redis();
    const claimed = await redis.eval(
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
    const written = await redis.eval(
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
    await redis.eval(
      END_SCRIPT,
      4,
      this.activeKey(chatId),
      this.streamKey(chatId, streamId),
      this.stopFlagPrefix(chatId) + streamId,
      this.steerListPrefix(chatId) + streamId,
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
        const reader = await openRedis(store.options.connection);
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
    const id = await redis.eval(
      STOP_SCRIPT,
      1,
      this.activeKey(chatId),
      this.stopFlagPrefix(chatId),
      this.stopChannelPrefix(),
      chatId,
    );
    return typeof id === 'string';
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
    if ((await (await this.redis()).exists(this.stopFlagPrefix(chatId) + streamId)) === 1) listener();
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
    const id = await redis.eval(
      STEER_SCRIPT,
      2,
      this.activeKey(chatId),
      this.handedOffKey(chatId),
      this.steerListPrefix(chatId),
      this.steerChannelPrefix(),
      chatId,
      JSON.stringify(message),
    );
    return typeof id === 'string';
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
    const entries = await (await this.redis()).lrange(this.handedOffKey(chatId), 0, -1);
    return entries.map((json) => JSON.parse(json) as HandedOff);
  }

  async settle(chatId: string, ids: readonly string[]): Promise<void> {
    if (ids.length === 0) return;
    const redis = await this.redis();
    const key = this.handedOffKey(chatId);
    const settled = new Set(ids);
    const entries = await redis.lrange(key, 0, -1);
    const gone = entries.filter((json) => settled.has(handOffId((JSON.parse(json) as HandedOff).message)));
    if (gone.length === 0) return;
    const removal = redis.multi();
    for (const json of gone) removal.lrem(key, 1, json);
    await removal.exec();
  }

  /** Gives `entry` the steered messages it has not had yet, one read at a time (each message once). */
  private drainSteered(chatId: string, streamId: string, entry: SteerListener): Promise<void> {
    entry.draining = entry.draining.then(async () => {
      if (this.closed) return;
      const list = this.steerListPrefix(chatId) + streamId;
      const messages = await (await this.redis()).lrange(list, entry.delivered, -1);
      entry.delivered += messages.length;
      for (const json of messages) entry.listener(JSON.parse(json) as Message);
    });
    return entry.draining;
  }

  private subscribe(): Promise<Redis> {
    this.subscriber ??= openRedis(this.options.connection).then((subscriber) => {
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
    return this.subscriber;
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
