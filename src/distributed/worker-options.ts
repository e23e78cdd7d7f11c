import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { StreamStore } from '../chat/stream-store';
import type { SessionStore } from '../persistence/session-store';
import type { Agent } from '../runtime/create-agent';
import { InvalidArgumentError } from '../state/errors';
import { DEFAULT_QUEUE_NAME } from './agent-job';
import { DEFAULT_CONNECT_TIMEOUT_MS } from './redis-modules';
import type { RedisConnection } from './redis-types';
import { DEFAULT_SESSION_LOCK_TTL_MS } from './session-lock';

/**
 * The worker's timing defaults, chosen with `npm run bench distributed-takeover` (figures in the
 * README): a dead worker's sessions are resumed elsewhere within about 10 s, and a live worker
 * whose event loop is blocked for up to 4 s (a long synchronous tool, a starved CPU) keeps its jobs.
 * The session lock (6 s, renewed every 2 s) outlives a dead worker by less than its job lock does
 * (8 s, renewed every 2 to 4 s), so the job is not picked up again before the session is free.
 */
export const WORKER_TIMING_DEFAULTS = {
  lockDurationMs: 8_000,
  stalledIntervalMs: 1_000,
  sessionLockTtlMs: DEFAULT_SESSION_LOCK_TTL_MS,
  busyRetryDelayMs: 500,
  maxStalledCount: 1_000_000,
  maxSessionCrashes: 3,
} as const;

export interface AgentWorkerOptions {
  /**
   * The agents this worker runs, by the name jobs give. A factory is called once per job (an
   * agent with per-run state of its own); an agent is shared by all jobs. The worker runs them on
   * its `store` (an agent's own store, if it has one, is not used).
   */
  readonly agents: Readonly<Record<string, Agent | (() => Agent)>>;
  /** Where sessions are checkpointed: shared by every worker, e.g. a RedisSessionStore. */
  readonly store: SessionStore;
  /**
   * Where Redis is (queue, session locks): ioredis options, or a client or Cluster to duplicate.
   * On a Cluster, BullMQ is given a Cluster of the worker's own and the queue prefix `{bull:<queue>}`.
   */
  readonly connection: RedisConnection;
  /**
   * How long connecting may take before createAgentWorker rejects with RedisUnreachableError
   * (REDIS_UNREACHABLE), in ms (default 10,000).
   */
  readonly connectTimeoutMs?: number;
  /**
   * Where the runs of chats served by the pool (`createChatHandler({ client })`) write their UI
   * message streams: the chat handlers' StreamStore, e.g. a RedisStreamStore. A job with a chat
   * stream fails (NO_STREAM_STORE) on a worker without it.
   */
  readonly streams?: StreamStore;
  /** Jobs run at once by this worker (default 4). */
  readonly concurrency?: number;
  /** The BullMQ queue (default `agent-machine`). */
  readonly queueName?: string;
  /**
   * BullMQ's key prefix (default BullMQ's, `bull`; on a Redis Cluster `{bull:<queueName>}`, and a
   * prefix given there must hold a hash tag: `{...}`).
   */
  readonly prefix?: string;
  /** This worker's id in progress reports and results (default `<host>:<pid>:<random>`). */
  readonly id?: string;
  /**
   * A job whose session another job holds: `'wait'` (default) puts it back in the queue, delayed
   * by `busyRetryDelayMs`; `'fail'` fails it with SessionBusyError.
   */
  readonly whenSessionBusy?: 'wait' | 'fail';
  /**
   * Delay before a job for a busy session is tried again (default 500 ms). Shorter: a job that
   * waits (for another job of its session, or for a dead worker's session lock to expire) starts
   * sooner once the session is free, at the cost of more Redis round trips while it waits.
   */
  readonly busyRetryDelayMs?: number;
  /**
   * Time to live of a session lock without renewal (default 6 s); its holder renews it every
   * third of that. A dead worker's session locks expire 2/3 to 3/3 of it after the death: keep it
   * at most 3/4 of `lockDurationMs`, or the taken-over job finds the session still locked and
   * waits (`busyRetryDelayMs` at a time). A live worker whose event loop is blocked for more than
   * 2/3 of it loses the lock: its run stops with SESSION_LOCK_LOST and the retry resumes from the
   * last checkpoint (the step in flight runs again). Longer: tolerates longer blocks, slower
   * take-over.
   */
  readonly sessionLockTtlMs?: number;
  /** Key prefix of the session locks (default `agent-machine:session-lock:`; a lock is `<prefix>{<session id>}`). */
  readonly sessionLockPrefix?: string;
  /**
   * BullMQ's job lock (default 8 s; BullMQ's own default is 30 s). The worker renews the locks of
   * its running jobs every quarter to half of it; a job whose lock expired is stalled, and the
   * next stalled check (`stalledIntervalMs`) hands it to another worker, which resumes the session
   * from its last checkpoint. So a dead worker's jobs are taken over 1/2 to 1 of it after the
   * death, plus up to `stalledIntervalMs`. Shorter: faster take-over, but a live worker whose event
   * loop is blocked for more than half of it may lose its job (a false stall: the job waits for
   * the session, and the stall counts against `maxStalledCount`).
   */
  readonly lockDurationMs?: number;
  /**
   * How often the workers look for stalled jobs (default 1 s; BullMQ's own default is 30 s): one
   * worker per interval runs a Lua script that reads the queue's active jobs. Shorter: a stalled
   * job is taken over sooner after its lock expired; more Redis work (linear in the running jobs).
   */
  readonly stalledIntervalMs?: number;
  /**
   * How many times BullMQ lets a job be taken over after a stall before it fails it ("job stalled
   * more than allowable limit"). Default 1,000,000: a durable session is resumed after any number
   * of worker deaths, and a session that kills its worker is stopped by `maxSessionCrashes`
   * instead. 0: a dead worker's jobs fail instead of being resumed.
   */
  readonly maxStalledCount?: number;
  /**
   * A poison session: one whose runs died with their worker this many times in a row without a new
   * checkpoint in between (default 3) fails its job with PoisonSessionError (POISON_SESSION)
   * instead of being taken over again; the session loads as its last checkpoint left it. A death
   * after a new checkpoint counts as the first again, so a session that goes on is never failed
   * by deaths.
   */
  readonly maxSessionCrashes?: number;
  /**
   * Errors that belong to no job: BullMQ connection errors, session lock renewal errors, progress
   * reports that could not be written. Default: console.error.
   */
  readonly onError?: (error: Error) => void;
}

export interface WorkerSettings {
  readonly workerId: string;
  readonly queueName: string;
  readonly concurrency: number;
  readonly whenSessionBusy: 'wait' | 'fail';
  readonly busyRetryDelayMs: number;
  readonly sessionLockTtlMs: number;
  readonly lockDurationMs: number;
  readonly stalledIntervalMs: number;
  readonly maxStalledCount: number;
  readonly maxSessionCrashes: number;
  readonly connectTimeoutMs: number;
}

/** The options with their defaults, or InvalidArgumentError naming the first bad one. */
export function workerSettings(options: AgentWorkerOptions): WorkerSettings {
  if (!options || typeof options !== 'object')
    throw new InvalidArgumentError('options', 'expected an object');
  const { agents, store, connection } = options;
  if (!agents || typeof agents !== 'object' || Object.keys(agents).length === 0)
    throw new InvalidArgumentError('agents', 'expected at least one agent by name: { name: agent }');
  for (const [name, entry] of Object.entries(agents)) {
    const ok =
      typeof entry === 'function' || (typeof entry === 'object' && entry !== null && 'definition' in entry);
    if (!ok)
      throw new InvalidArgumentError(
        `agents.${name}`,
        'expected an agent (createAgent()) or a function returning one',
      );
  }
  if (!store || typeof store.save !== 'function' || typeof store.load !== 'function')
    throw new InvalidArgumentError('store', 'expected a SessionStore, e.g. a RedisSessionStore');
  if (!connection || typeof connection !== 'object')
    throw new InvalidArgumentError(
      'connection',
      'expected ioredis options ({ host, port }) or an ioredis client',
    );
  const integer = (name: string, value: number | undefined, fallback: number, min: number) => {
    const chosen = value ?? fallback;
    if (!Number.isSafeInteger(chosen) || chosen < min)
      throw new InvalidArgumentError(
        name,
        `${value} is not ${min === 1 ? 'a positive integer' : `an integer >= ${min}`}`,
      );
    return chosen;
  };
  const whenSessionBusy = options.whenSessionBusy ?? 'wait';
  if (whenSessionBusy !== 'wait' && whenSessionBusy !== 'fail')
    throw new InvalidArgumentError(
      'whenSessionBusy',
      `${JSON.stringify(whenSessionBusy)} is not 'wait' or 'fail'`,
    );
  const defaults = WORKER_TIMING_DEFAULTS;
  return {
    workerId: options.id ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`,
    queueName: options.queueName ?? DEFAULT_QUEUE_NAME,
    concurrency: integer('concurrency', options.concurrency, 4, 1),
    whenSessionBusy,
    busyRetryDelayMs: integer('busyRetryDelayMs', options.busyRetryDelayMs, defaults.busyRetryDelayMs, 1),
    sessionLockTtlMs: integer('sessionLockTtlMs', options.sessionLockTtlMs, defaults.sessionLockTtlMs, 100),
    lockDurationMs: integer('lockDurationMs', options.lockDurationMs, defaults.lockDurationMs, 100),
    stalledIntervalMs: integer(
      'stalledIntervalMs',
      options.stalledIntervalMs,
      defaults.stalledIntervalMs,
      100,
    ),
    maxStalledCount: integer('maxStalledCount', options.maxStalledCount, defaults.maxStalledCount, 0),
    maxSessionCrashes: integer('maxSessionCrashes', options.maxSessionCrashes, defaults.maxSessionCrashes, 1),
    connectTimeoutMs: integer('connectTimeoutMs', options.connectTimeoutMs, DEFAULT_CONNECT_TIMEOUT_MS, 1),
  };
}
