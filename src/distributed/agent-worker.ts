import type { Job, Worker } from 'bullmq';
import { type ChatRunPublisher, failChatStream, publishChatRun } from '../chat/chat-run-publisher';
import { startChatTurn } from '../chat/chat-turn';
import type { StreamStore } from '../chat/stream-store';
import { SessionNotFoundError } from '../persistence/errors';
import type { SessionStore } from '../persistence/session-store';
import { type Agent, createAgent } from '../runtime/create-agent';
import type { InternalExecuteOptions } from '../runtime/run-to-outcome';
import { AgentState } from '../state/agent-state';
import type { EventSource } from '../state/event-source';
import type { AgentEvent } from '../state/loop-events';
import { type AgentJobRequest, type AgentJobReturnValue, JOB_METADATA_KEY, parseAgentJob } from './agent-job';
import { runDecision } from './decision-run';
import { NoStreamStoreError, PoisonSessionError, SessionBusyError, UnknownAgentError } from './errors';
import { bullSignal, jobError, unrecoverable } from './job-errors';
import { progressReporter } from './job-progress';
import {
  type BullMQModule,
  bullmqConnection,
  bullmqPrefix,
  closeRedis,
  connectRedis,
  loadBullmq,
  readyWithin,
} from './redis-modules';
import { RunStore } from './run-store';
import { SessionCrashes } from './session-crashes';
import { type SessionLock, SessionLocks } from './session-lock';
import { type AgentWorkerOptions, type WorkerSettings, workerSettings } from './worker-options';

export interface AgentWorker {
  readonly id: string;
  readonly queueName: string;
  /** The jobs running now. */
  running(): number;
  /**
   * Graceful shutdown: takes no new jobs; each running job finishes its current step (model call,
   * tool calls, checkpoint), then is released back to the queue, where another worker resumes it
   * from that checkpoint. Resolves once every job has finished or been released and the
   * connections are closed. The store is not closed (it is the caller's).
   */
  close(): Promise<void>;
}

const UNFINISHED_JOB_STATES = new Set(['active', 'waiting', 'delayed', 'prioritized', 'waiting-children']);

/**
 * Starts a worker that runs agent jobs from a BullMQ queue over Redis: `execute` (a state and/or a
 * user message for a session), `resume` (continue a session from its last checkpoint) and `decide`
 * (decisions on the calls a waiting session lists, then the rest of the run). Enqueue
 * them with createAgentClient. Agents are registered here by name; a job names its agent.
 *
 * Guarantees: one session runs on one worker at a time (a session lock in Redis); a worker that
 * dies loses at most its step in flight (BullMQ hands the job to another worker, which resumes from
 * the last checkpoint: within about 10 s with the default timings, see AgentWorkerOptions); bad jobs
 * fail with typed errors and the others go on. Resolves once the worker is connected and taking jobs.
 *
 * @example
 * const store = new RedisSessionStore({ connection: { host: '127.0.0.1', port: 6379 } });
 * const worker = await createAgentWorker({
 *   agents: { support: supportAgent, research: () => createAgent({ model, tools }) },
 *   store,
 *   connection: { host: '127.0.0.1', port: 6379 },
 *   concurrency: 8,
 * });
 * process.on('SIGTERM', () => void worker.close().then(() => store.close()));
 */
export async function createAgentWorker(options: AgentWorkerOptions): Promise<AgentWorker> {
  const settings = workerSettings(options);
  const bull = await loadBullmq();
  const onError =
    options.onError ?? ((error: Error) => console.error(`[agent-machine worker] ${error.stack}`));
  const bullConnection = bullmqConnection(options.connection);
  const prefix = bullmqPrefix(options.connection, options.prefix, settings.queueName);
  let redis: Awaited<ReturnType<typeof connectRedis>>;
  try {
    redis = await connectRedis(options.connection, settings.connectTimeoutMs);
  } catch (error) {
    if (bullConnection.owned) bullConnection.owned.disconnect();
    throw error;
  }
  redis.on('error', onError);
  const locks = new SessionLocks(redis, {
    prefix: options.sessionLockPrefix,
    ttlMs: settings.sessionLockTtlMs,
    onError,
  });
  const crashes = new SessionCrashes(redis, locks.prefix, settings.maxSessionCrashes);
  const runs = new Set<RunStore>();
  let closing = false;
  let closed: Promise<void> | null = null;

  const context: JobContext = {
    ...settings,
    bull,
    store: options.store,
    streams: options.streams ?? null,
    published: new WeakSet(),
    agents: options.agents,
    locks,
    crashes,
    runs,
    onError,
    isClosing: () => closing,
    findJob: (id) => bull.Job.fromId(worker, id),
  };

  const worker: Worker = new bull.Worker(
    settings.queueName,
    async (job: Job, token?: string) => {
      try {
        return await processJob(context, job, token as string);
      } catch (error) {
        await endChatOfFailedJob(context, job, error);
        throw jobError(bull, error);
      }
    },
    definedOnly({
      connection: bullConnection.connection,
      prefix,
      concurrency: settings.concurrency,
      lockDuration: settings.lockDurationMs,
      stalledInterval: settings.stalledIntervalMs,
      maxStalledCount: settings.maxStalledCount,
      autorun: true,
    }),
  );
  worker.on('error', onError);
  try {
    await readyWithin(worker.waitUntilReady(), options.connection, settings.connectTimeoutMs);
  } catch (error) {
    await worker.close(true).catch(() => undefined);
    if (bullConnection.owned) bullConnection.owned.disconnect();
    await closeRedis(redis);
    throw error;
  }

  return {
    id: settings.workerId,
    queueName: settings.queueName,
    running: () => runs.size,
    close() {
      if (closed) return closed;
      closing = true;
      for (const run of runs) run.drain();
      closed = (async () => {
        try {
          await worker.close();
        } finally {
          if (bullConnection.owned) await closeRedis(bullConnection.owned);
          await closeRedis(redis);
        }
      })();
      return closed;
    },
  };
}

interface JobContext extends WorkerSettings {
  readonly bull: BullMQModule;
  readonly store: SessionStore;
  readonly streams: StreamStore | null;
  /** The jobs whose run writes its chat stream in this attempt (it ends the stream itself). */
  readonly published: WeakSet<Job>;
  readonly agents: Readonly<Record<string, Agent | (() => Agent)>>;
  readonly locks: SessionLocks;
  readonly crashes: SessionCrashes;
  readonly runs: Set<RunStore>;
  readonly onError: (error: Error) => void;
  isClosing(): boolean;
  findJob(id: string): Promise<Job | undefined>;
}

async function processJob(context: JobContext, job: Job, token: string): Promise<AgentJobReturnValue> {
  if (context.isClosing()) return release(context, job, token, null);
  const request = parseAgentJob(job.name, job.data);
  const entry = Object.hasOwn(context.agents, request.agent) ? context.agents[request.agent] : undefined;
  if (!entry) throw new UnknownAgentError(request.agent, Object.keys(context.agents));
  const lock = await context.locks.acquire(request.sessionId, `${context.workerId}/${job.id}`);
  if (!lock) return busy(context, job, token, request.sessionId);
  try {
    if (context.isClosing()) return await release(context, job, token, lock);
    return await runJob(context, job, token, request, entry, lock);
  } finally {
    // ended, not by a death: the run's note goes (see session-crashes.ts)
    await context.crashes.end(request.sessionId, lock.token).catch(context.onError);
    await lock.release();
  }
}

/** The session is held by another job: wait (back to the queue, delayed) or refuse. */
async function busy(context: JobContext, job: Job, token: string, sessionId: string): Promise<never> {
  if (context.whenSessionBusy === 'fail') throw new SessionBusyError(sessionId);
  await job.moveToDelayed(Date.now() + context.busyRetryDelayMs, token);
  throw new context.bull.DelayedError();
}

/** Hands the job back to the queue (worker closing); another worker resumes it. */
async function release(
  context: JobContext,
  job: Job,
  token: string,
  lock: SessionLock | null,
): Promise<never> {
  await lock?.release();
  await job.moveToWait(token);
  throw new context.bull.WaitingError();
}

async function runJob(
  context: JobContext,
  job: Job,
  token: string,
  request: AgentJobRequest,
  entry: Agent | (() => Agent),
  lock: SessionLock,
): Promise<AgentJobReturnValue> {
  const { sessionId } = request;
  const jobMark = `${context.queueName}/${job.id}`;
  const stored = await context.store.load(sessionId);
  let start: AgentState | null = null;
  let turn: { readonly state: AgentState; readonly text: string } | null = null;
  if (request.kind === 'resume' || request.kind === 'decide') {
    if (!stored) throw new SessionNotFoundError(sessionId);
  } else if (stored?.state.metadata()[JOB_METADATA_KEY] !== jobMark) {
    // A session whose execution another job started and has not finished (it may be stalled on
    // a dead worker, about to be resumed elsewhere) is not overwritten: wait for that job.
    if (stored?.state.status() === 'in_progress' && (await otherJobUnfinished(context, stored.state, job))) {
      await lock.release();
      return busy(context, job, token, sessionId);
    }
    const state = request.state ?? stored?.state ?? AgentState.empty();
    // a chat's message starts a chat turn (startChatTurn, at the run's start below)
    if (request.chatStream && request.message !== null) turn = { state, text: request.message };
    else if (request.chatStream) start = state.withSteeringApplied();
    else start = request.message !== null ? state.withUserMessage(request.message) : state;
  }
  // else: this job started the stored execution (it stalled or was released): resume it.

  const crashed = await context.crashes.start(sessionId, stored?.version ?? null, lock.token);
  if (crashed.poison) throw new PoisonSessionError(sessionId, crashed.deaths);
  const base = typeof entry === 'function' ? entry() : entry;
  const runStore = new RunStore(context.store, lock);
  context.runs.add(runStore);
  if (context.isClosing()) runStore.drain();
  const controller = new AbortController();
  lock.onLost((error) => {
    runStore.halt({ kind: 'lock-lost', error });
    controller.abort(error);
  });
  const progress = progressReporter(job, request, context.workerId, context.onError);
  let chat: ChatRunPublisher | null = null;
  try {
    if (request.kind !== 'resume' && request.chatStream) {
      if (!context.streams) throw new NoStreamStoreError(sessionId);
      const restarted = stored?.state.metadata()[JOB_METADATA_KEY] === jobMark;
      chat = await publishChatRun({
        streams: context.streams,
        chatId: sessionId,
        chatStream: request.chatStream,
        restartedStep: restarted && stored ? stored.state.stepCount() + 1 : null,
        stored: stored?.state ?? null,
        workerId: context.workerId,
        onStop: () => controller.abort(),
        onError: (error) => context.onError(asError(error)),
      });
      context.published.add(job);
    }
  } catch (error) {
    context.runs.delete(runStore);
    throw error;
  }
  const onEvent = listeners(progress.onEvent, chat?.onEvent ?? null);
  const runOptions = {
    signal: controller.signal,
    ...(onEvent && { onEvent }),
    ...(chat && { runHandle: chat.runHandle }),
    ...(request.ledgerScopes && { ledgerScopes: request.ledgerScopes }),
  };
  try {
    const agent = createAgent({ ...base.definition, store: runStore });
    // the job's one load of the session: the run's start is given its version
    const turnOptions: InternalExecuteOptions = {
      ...runOptions,
      sessionId,
      storedVersion: stored?.version ?? null,
    };
    const execute = (state: AgentState) =>
      agent.execute(state.withMetadata(JOB_METADATA_KEY, jobMark), turnOptions);
    let running =
      request.kind === 'decide' && stored
        ? runDecision(agent, request, stored, jobMark, runOptions)
        : turn !== null
          ? startChatTurn(turn.state, turn.text, execute)
          : start === null
            ? agent.resume(sessionId, runOptions)
            : execute(start);
    let state: AgentState;
    for (;;) {
      const outcome = await Promise.race([
        running.then((state) => ({ kind: 'finished' as const, state })),
        runStore.halted,
      ]);
      // A halted run may still fail later (an abort after a lost lock): its error is reported.
      if (outcome.kind !== 'finished') running.catch((error: unknown) => context.onError(asError(error)));
      await progress.flush();
      if (outcome.kind === 'lock-lost') throw outcome.error;
      if (outcome.kind === 'released') {
        await chat?.handOver();
        return await release(context, job, token, lock);
      }
      if (runStore.saveError) throw runStore.saveError;
      const lost = lock.lost();
      if (lost) throw lost;
      // a chat's messages queued meanwhile: the next execution, in this job and on the same stream
      const next = await chat?.nextExecution(outcome.state, controller.signal.aborted);
      if (!next) {
        state = outcome.state;
        break;
      }
      running = agent.execute(next.withMetadata(JOB_METADATA_KEY, jobMark), { ...runOptions, sessionId });
    }
    let version = runStore.version ?? stored?.version ?? null;
    const kept = chat && (await chat.conclude(state, context.store));
    if (kept) ({ state, version } = kept);
    return {
      sessionId,
      agent: request.agent,
      workerId: context.workerId,
      version,
      status: state.status(),
      // a lean result: the client reads the state from the store (no copy in Redis)
      ...((job.data as { leanResult?: true }).leanResult
        ? {}
        : { state: state.toJSON() as AgentJobReturnValue['state'] }),
    };
  } catch (error) {
    if (chat) await (lastAttempt(context, job, error) ? chat.finish({ error }) : chat.handOver());
    throw error;
  } finally {
    context.runs.delete(runStore);
  }
}

/** Whether the job fails for good with `error` (no retry, no other worker goes on with it). */
function lastAttempt(context: JobContext, job: Job, error: unknown): boolean {
  if (bullSignal(context.bull, error)) return false;
  if (unrecoverable(error)) return true;
  return job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}

/** A chat job that fails for good before its run wrote its stream: the stream ends with an error. */
async function endChatOfFailedJob(context: JobContext, job: Job, error: unknown): Promise<void> {
  if (!context.streams || context.published.has(job) || !lastAttempt(context, job, error)) return;
  const onError = (failure: unknown) => context.onError(asError(failure));
  await failChatStream(context.streams, job.data, error, onError).catch(onError);
}

async function otherJobUnfinished(context: JobContext, state: AgentState, job: Job): Promise<boolean> {
  const mark = state.metadata()[JOB_METADATA_KEY];
  if (typeof mark !== 'string') return false;
  const slash = mark.lastIndexOf('/');
  const queue = mark.slice(0, slash);
  const otherId = mark.slice(slash + 1);
  if (queue !== context.queueName || otherId === job.id) return false;
  const other = await context.findJob(otherId);
  if (!other) return false;
  return UNFINISHED_JOB_STATES.has(await other.getState());
}

type RunListener = (event: AgentEvent, source: EventSource) => void;

/** The run's event listener: progress and/or the chat's, or none when no one listens. */
function listeners(progress: RunListener | null, chat: RunListener | null): RunListener | null {
  if (!progress || !chat) return progress ?? chat;
  return (event, source) => {
    progress(event, source);
    chat(event, source);
  };
}

/** BullMQ takes an option given as undefined for a value: leave such options out. */
function definedOnly<T extends object>(options: T): T {
  return Object.fromEntries(Object.entries(options).filter(([, v]) => v !== undefined)) as T;
}

function asError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
