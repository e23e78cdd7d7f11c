import { randomUUID } from 'node:crypto';
import type { Job, JobsOptions, Queue, QueueEvents } from 'bullmq';
import type { ChatJobStream } from '../chat/chat-pool-handler';
import { SessionNotFoundError } from '../persistence/errors';
import type { JournaledSessionStore } from '../persistence/journal/checkpoint';
import type { SessionStore } from '../persistence/session-store';
import type { ApprovalInput } from '../runtime/approvals';
import { AgentState } from '../state/agent-state';
import { InvalidArgumentError } from '../state/errors';
import type { ExecutionStatus } from '../state/execution-status';
import {
  AgentJobName,
  type AgentJobReturnValue,
  type AgentStepProgress,
  checkAgentJob,
  DEFAULT_QUEUE_NAME,
  type DecideJobData,
  type ExecuteJobData,
  type ResumeJobData,
} from './agent-job';
import { InvalidJobPayloadError } from './errors';
import { finished } from './job-finished';
import {
  bullmqConnection,
  bullmqPrefix,
  closeRedis,
  connectRedis,
  connectTimeout,
  loadBullmq,
  readyWithin,
} from './redis-modules';
import type { JobOptions, RedisConnection } from './redis-types';

export interface AgentClientOptions {
  /**
   * Where Redis is: ioredis options, or a client or Cluster to duplicate. On a Cluster, BullMQ is
   * given a Cluster of the client's own and the queue prefix `{bull:<queue>}`.
   */
  readonly connection: RedisConnection;
  /**
   * How long connecting may take before createAgentClient rejects with RedisUnreachableError
   * (REDIS_UNREACHABLE), in ms (default 10,000).
   */
  readonly connectTimeoutMs?: number;
  /** The BullMQ queue (default `agent-machine`); the workers' `queueName`. */
  readonly queueName?: string;
  /** BullMQ's key prefix (default BullMQ's, `bull`; on a Cluster `{bull:<queueName>}`); the workers' `prefix`. */
  readonly prefix?: string;
  /**
   * BullMQ job options for every job (per job: `options.job`). Defaults: 3 attempts with
   * exponential backoff from 1 s (only errors a retry may get past are retried: a lost lock, a
   * version conflict, an unknown error; bad input fails at once), completed jobs kept for a day
   * (at most 10,000), failed jobs for a week.
   */
  readonly jobOptions?: JobOptions;
  /** Where errors of progress listeners and of the event stream go. Default: console.error. */
  readonly onError?: (error: Error) => void;
  /**
   * The workers' store. Given, jobs are lean: their BullMQ result holds no copy of the final
   * state, and `job.finished()` reads it from this store (the version the job reports).
   */
  readonly store?: SessionStore;
}

/** An execution for a session: a state, a user message, or a state and a message appended to it. */
export interface ExecuteRequest {
  /** The name the workers registered the agent under. */
  readonly agent: string;
  readonly sessionId: string;
  /** The budget ledger scopes the run charges (`ExecuteOptions.ledgerScopes`). */
  readonly ledgerScopes?: readonly string[];
  /** The state to run (it replaces the stored session); without it, the stored session is used. */
  readonly state?: AgentState;
  /** A user message appended before the run (to `state`, or to the stored session). */
  readonly message?: string;
  /** The chat stream the worker writes the run's UI message chunks to (`createChatHandler({ client })` sets it). */
  readonly chatStream?: ChatJobStream;
}

export interface ResumeRequest {
  readonly agent: string;
  readonly sessionId: string;
  /** The budget ledger scopes the run charges (`ExecuteOptions.ledgerScopes`). */
  readonly ledgerScopes?: readonly string[];
}

/** Decisions on the calls a session waits for (`state.pendingApprovals()`, its subagents' included). */
export interface DecideRequest {
  readonly agent: string;
  readonly sessionId: string;
  /** The budget ledger scopes the run charges (`ExecuteOptions.ledgerScopes`). */
  readonly ledgerScopes?: readonly string[];
  readonly decisions: readonly ApprovalInput[];
  /** The chat stream the worker writes the run's UI message chunks to (`createChatHandler({ client })` sets it). */
  readonly chatStream?: ChatJobStream;
}

export interface EnqueueOptions {
  /** The BullMQ job id (default a random UUID). A job id that exists is not enqueued again. */
  readonly jobId?: string;
  /** Called with each step the job's run records (BullMQ progress), from the first step on. */
  readonly onProgress?: (progress: AgentStepProgress) => void;
  /**
   * Whether the worker reports the job's steps as progress (default: only when `onProgress` is
   * given). A job no one listens to costs no progress writes; `job.onProgress(fn)` needs it.
   */
  readonly progress?: boolean;
  /** BullMQ options for this job (delay, priority, attempts, ...). */
  readonly job?: JobOptions;
}

/** A finished job: the session's final state, and where it ran. */
export interface AgentJobResult {
  readonly state: AgentState;
  readonly status: ExecutionStatus;
  readonly sessionId: string;
  readonly agent: string;
  /** The worker that finished the run (a run resumed elsewhere names the last worker). */
  readonly workerId: string;
  /** The session's stored version after the run. */
  readonly version: number | null;
}

/** An enqueued job. */
export interface AgentJob {
  readonly id: string;
  readonly name: AgentJobName;
  readonly agent: string;
  readonly sessionId: string;
  /**
   * Resolves with the result when the job completes; rejects with AgentJobFailedError (naming the
   * worker's error name and code) when it fails, AgentJobTimeoutError after `timeoutMs`,
   * AgentJobLostError (JOB_LOST) within about 4 s of the job's disappearance from Redis.
   */
  finished(options?: { timeoutMs?: number }): Promise<AgentJobResult>;
  /**
   * Calls `listener` for each step recorded from now on; returns the unsubscribe function. Only
   * for a job enqueued with `onProgress` or `progress: true` (else InvalidArgumentError naming `progress`).
   */
  onProgress(listener: (progress: AgentStepProgress) => void): () => void;
}

export interface AgentClient {
  readonly queueName: string;
  /** Enqueues an execution for a session; resolves once the job is in the queue. */
  execute(request: ExecuteRequest, options?: EnqueueOptions): Promise<AgentJob>;
  /** Enqueues "continue the session from its last checkpoint"; a finished session is returned as is. */
  resume(request: ResumeRequest, options?: EnqueueOptions): Promise<AgentJob>;
  /**
   * Enqueues decisions on the calls a session waits for: a worker takes them (as `agent.decide`,
   * under the session lock) and runs the rest of the run, with progress. A decision the session
   * cannot take fails the job with ApprovalError's code (APPROVAL_NOT_PENDING, ...).
   */
  decide(request: DecideRequest, options?: EnqueueOptions): Promise<AgentJob>;
  /** Closes the queue and the event stream (jobs in the queue stay for the workers). */
  close(): Promise<void>;
}

const DEFAULT_JOB_OPTIONS: JobsOptions = {
  attempts: 3,
  backoff: { type: 'exponential', delay: 1_000 },
  removeOnComplete: { age: 24 * 3600, count: 10_000 },
  removeOnFail: { age: 7 * 24 * 3600 },
};

/**
 * A client of the agent workers (createAgentWorker): enqueues executions and resumes, awaits their
 * final states, and follows their steps. Resolves once connected.
 *
 * @example
 * const client = await createAgentClient({ connection: { host: '127.0.0.1', port: 6379 } });
 * const job = await client.execute(
 *   { agent: 'support', sessionId: 'chat-42', message: 'Where is my order?' },
 *   { onProgress: (p) => console.log(`step ${p.stepNumber} on ${p.workerId}`) },
 * );
 * const { state } = await job.finished({ timeoutMs: 60_000 });
 * state.finalResponse();
 */
export async function createAgentClient(options: AgentClientOptions): Promise<AgentClient> {
  if (
    !options ||
    typeof options !== 'object' ||
    !options.connection ||
    typeof options.connection !== 'object'
  )
    throw new InvalidArgumentError(
      'connection',
      'expected ioredis options ({ host, port }) or an ioredis client',
    );
  const timeoutMs = connectTimeout(options.connectTimeoutMs);
  const bull = await loadBullmq();
  const queueName = options.queueName ?? DEFAULT_QUEUE_NAME;
  const onError =
    options.onError ?? ((error: Error) => console.error(`[agent-machine client] ${error.stack}`));
  const bullPrefix = bullmqPrefix(options.connection, options.prefix, queueName);
  // Redis is reached first (or REDIS_UNREACHABLE): BullMQ would wait for it without end.
  const redis = await connectRedis(options.connection, timeoutMs);
  const { connection, owned } = bullmqConnection(options.connection);
  const prefix = bullPrefix === undefined ? {} : { prefix: bullPrefix };
  const queue: Queue = new bull.Queue(queueName, {
    connection,
    ...prefix,
    // The public JobOptions type is structural (redis-types.ts); what is passed is BullMQ's own.
    defaultJobOptions: { ...DEFAULT_JOB_OPTIONS, ...(options.jobOptions as JobsOptions) },
  });
  queue.on('error', onError);
  // Each job.finished() in progress listens on the queue and the event stream: no fixed limit.
  queue.setMaxListeners(0);
  let events: QueueEvents | null = null;
  try {
    await readyWithin(queue.waitUntilReady(), options.connection, timeoutMs);
    // Events are read from the current end of the stream: none from now on is missed.
    let lastEventId = '0-0';
    try {
      const last = await redis.xrevrange(queue.keys.events as string, '+', '-', 'COUNT', 1);
      lastEventId = last[0]?.[0] ?? '0-0';
    } finally {
      await closeRedis(redis);
    }
    events = new bull.QueueEvents(queueName, { connection, ...prefix, lastEventId });
    events.on('error', onError);
    events.setMaxListeners(0);
    await readyWithin(events.waitUntilReady(), options.connection, timeoutMs);
  } catch (error) {
    await closeRedis(redis).catch(() => redis.disconnect());
    await events?.close().catch(() => undefined);
    await queue.close().catch(() => undefined);
    owned?.disconnect();
    throw error;
  }
  const queueEvents = events;

  const listeners = new Map<string, Set<(progress: AgentStepProgress) => void>>();
  queueEvents.on('progress', ({ jobId, data }) => {
    for (const listener of listeners.get(jobId) ?? []) {
      try {
        listener(data as unknown as AgentStepProgress);
      } catch (error) {
        onError(error instanceof Error ? error : new Error(String(error)));
      }
    }
  });
  const forget = ({ jobId }: { jobId: string }) => listeners.delete(jobId);
  queueEvents.on('completed', forget);
  queueEvents.on('failed', forget);

  const subscribe = (jobId: string, listener: (progress: AgentStepProgress) => void) => {
    const set = listeners.get(jobId) ?? new Set();
    listeners.set(jobId, set);
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && listeners.get(jobId) === set) listeners.delete(jobId);
    };
  };

  const store = options.store ?? null;
  const enqueue = async (
    name: AgentJobName,
    data: ExecuteJobData | ResumeJobData | DecideJobData,
    enqueueOptions: EnqueueOptions,
  ): Promise<AgentJob> => {
    const jobId = enqueueOptions.jobId ?? randomUUID();
    if (store) data = { ...data, leanResult: true };
    if (enqueueOptions.progress !== undefined && typeof enqueueOptions.progress !== 'boolean')
      throw new InvalidArgumentError('progress', 'expected true or false');
    const progress = enqueueOptions.progress ?? enqueueOptions.onProgress !== undefined;
    if (progress) data = { ...data, progress: true };
    const unsubscribe = enqueueOptions.onProgress ? subscribe(jobId, enqueueOptions.onProgress) : null;
    let job: Job;
    try {
      job = await queue.add(name, data, { ...(enqueueOptions.job as JobsOptions), jobId });
    } catch (error) {
      unsubscribe?.();
      throw error;
    }
    return {
      id: jobId,
      name,
      agent: data.agent,
      sessionId: data.sessionId,
      onProgress: (listener) => {
        if (!progress)
          throw new InvalidArgumentError(
            'progress',
            `job ${jobId} was enqueued without progress: pass onProgress or progress: true when enqueuing it`,
          );
        return subscribe(jobId, listener);
      },
      finished: async (waitOptions = {}) => {
        const value = await finished(job, data, queue, queueEvents, waitOptions.timeoutMs);
        return jobResult(value, store);
      },
    };
  };

  return {
    queueName,
    async execute(request, enqueueOptions = {}) {
      return enqueue(AgentJobName.Execute, executeData(request), enqueueOptions);
    },
    async resume(request, enqueueOptions = {}) {
      return enqueue(AgentJobName.Resume, resumeData(request), enqueueOptions);
    },
    async decide(request, enqueueOptions = {}) {
      return enqueue(AgentJobName.Decide, decideData(request), enqueueOptions);
    },
    async close() {
      listeners.clear();
      try {
        await queueEvents.close();
      } finally {
        try {
          await queue.close();
        } finally {
          if (owned) await closeRedis(owned);
        }
      }
    },
  };
}

/** The job data of an execute request, validated as the worker will (bad input fails here, early). */
function executeData(request: ExecuteRequest): ExecuteJobData {
  if (!request || typeof request !== 'object') throw new InvalidJobPayloadError('data', 'expected an object');
  const { agent, sessionId, state, message, chatStream, ledgerScopes } = request;
  if (state !== undefined && !(state instanceof AgentState))
    throw new InvalidJobPayloadError('data.state', 'expected an AgentState (or no state)');
  const data: ExecuteJobData = {
    agent,
    sessionId,
    ...(state !== undefined ? { state: state.toJSON() as ExecuteJobData['state'] } : {}),
    ...(message !== undefined ? { message } : {}),
    ...(chatStream !== undefined ? { chatStream } : {}),
    ...(ledgerScopes !== undefined ? { ledgerScopes } : {}),
  };
  // The state is an AgentState already: the rest is checked, the state is not decoded again.
  checkAgentJob(AgentJobName.Execute, data);
  return data;
}

function resumeData(request: ResumeRequest): ResumeJobData {
  if (!request || typeof request !== 'object') throw new InvalidJobPayloadError('data', 'expected an object');
  const { agent, sessionId, ledgerScopes } = request;
  const data = { agent, sessionId, ...(ledgerScopes !== undefined ? { ledgerScopes } : {}) };
  checkAgentJob(AgentJobName.Resume, data);
  return data;
}

function decideData(request: DecideRequest): DecideJobData {
  if (!request || typeof request !== 'object') throw new InvalidJobPayloadError('data', 'expected an object');
  const { agent, sessionId, decisions, chatStream, ledgerScopes } = request;
  const data = {
    agent,
    sessionId,
    decisions,
    ...(chatStream !== undefined ? { chatStream } : {}),
    ...(ledgerScopes !== undefined ? { ledgerScopes } : {}),
  };
  checkAgentJob(AgentJobName.Decide, data);
  return data;
}

/** The result of a finished job: its state from the result, or (a lean job) from the store at the version reported. */
async function jobResult(value: AgentJobReturnValue, store: SessionStore | null): Promise<AgentJobResult> {
  const common = {
    status: value.status,
    sessionId: value.sessionId,
    agent: value.agent,
    workerId: value.workerId,
    version: value.version,
  };
  if (value.state !== undefined) return { state: AgentState.fromJSON(value.state), ...common };
  if (!store || value.version === null) throw new SessionNotFoundError(value.sessionId);
  const journaled = store as Partial<JournaledSessionStore>;
  const loaded =
    typeof journaled.loadCheckpoint === 'function'
      ? await journaled.loadCheckpoint(value.sessionId, value.version)
      : await store.load(value.sessionId);
  if (!loaded) throw new SessionNotFoundError(value.sessionId);
  return { state: loaded.state, ...common };
}
