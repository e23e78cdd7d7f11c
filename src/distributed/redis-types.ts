/**
 * The ioredis and BullMQ types the public API names, written out here so that the package's types
 * need neither package: they are optional peers, and a project that does not use the Redis parts
 * type-checks without them (`skipLibCheck: false`). ioredis clients and options and BullMQ job
 * options are accepted as they are; only the fields and commands agent-machine uses are named.
 */

/** ioredis connection options (`{ host, port, db, password, tls, ... }`), passed to ioredis as given. */
export type RedisConnectionOptions =
  | {
      readonly host?: string;
      readonly port?: number;
      readonly db?: number;
      readonly username?: string;
      readonly password?: string;
    }
  | object;

/** The commands a session lock sends: an ioredis client has them. */
export interface RedisLockCommands {
  set(key: string, value: string, px: 'PX', milliseconds: number, nx: 'NX'): Promise<'OK' | null>;
  get(key: string): Promise<string | null>;
  eval(script: string, numberOfKeys: number, ...args: string[]): Promise<unknown>;
}

/** A connected ioredis client (`new Redis(...)`), of which agent-machine opens duplicates. */
export interface RedisClient {
  readonly options: object;
  readonly status: string;
  duplicate(overrides?: object): RedisClient;
  quit(): Promise<unknown>;
  disconnect(): void;
}

/**
 * Where Redis is: ioredis connection options or a connected ioredis client. A client is never used
 * directly: each part of agent-machine opens its own connection with `client.duplicate()` and
 * closes it when it closes, so the caller's client stays the caller's.
 */
export type RedisConnection = RedisConnectionOptions | RedisClient;

/** BullMQ job options (`{ attempts, backoff, delay, priority, removeOnComplete, ... }`), passed as given. */
export type JobOptions =
  | {
      readonly attempts?: number;
      readonly delay?: number;
      readonly priority?: number;
      readonly backoff?: number | { readonly type: string; readonly delay?: number };
      readonly removeOnComplete?: boolean | number | object;
      readonly removeOnFail?: boolean | number | object;
    }
  | object;
