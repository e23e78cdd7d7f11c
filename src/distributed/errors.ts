import { AgentMachineError } from '../state/errors';

/** `ioredis` or `bullmq` is not installed: they are optional peers, needed only for the Redis parts. */
export class DistributedDependencyMissingError extends AgentMachineError {
  static override get name(): string {
    return 'DistributedDependencyMissingError';
  }

  constructor(
    readonly moduleName: string,
    options?: { cause?: unknown },
  ) {
    super(
      'DISTRIBUTED_DEPENDENCY_MISSING',
      `The Redis store and the worker pool need the optional package "${moduleName}", which is not ` +
        `installed (or could not be loaded). Run \`npm install bullmq ioredis\`.`,
      options,
    );
  }
}

/** A job names an agent that this worker has not registered. */
export class UnknownAgentError extends AgentMachineError {
  static override get name(): string {
    return 'UnknownAgentError';
  }

  constructor(
    readonly agent: string,
    readonly registered: readonly string[],
  ) {
    super(
      'UNKNOWN_AGENT',
      `No agent named ${JSON.stringify(agent)} is registered on this worker (registered: ` +
        `${registered.length ? registered.map((n) => JSON.stringify(n)).join(', ') : 'none'}). Agents are ` +
        'registered by name in createAgentWorker({ agents }); code is not shipped through the queue.',
    );
  }
}

/** A job whose name or data is not one of the shapes the worker runs. */
export class InvalidJobPayloadError extends AgentMachineError {
  static override get name(): string {
    return 'InvalidJobPayloadError';
  }

  constructor(
    /** The path of the first bad field (`data.sessionId`), or `name` for the job name. */
    readonly path: string,
    readonly detail: string,
  ) {
    super(
      'INVALID_JOB_PAYLOAD',
      `Invalid agent job at ${path}: ${detail}. Enqueue jobs with createAgentClient(): ` +
        'execute({ agent, sessionId, state?, message? }) or resume({ agent, sessionId }).',
    );
  }
}

/**
 * Another job holds the session (policy `whenSessionBusy: 'fail'`). With the default policy
 * (`'wait'`) the job is put back in the queue with a delay instead, and this error is not raised.
 */
export class SessionBusyError extends AgentMachineError {
  static override get name(): string {
    return 'SessionBusyError';
  }

  constructor(readonly sessionId: string) {
    super(
      'SESSION_BUSY',
      `Session ${JSON.stringify(sessionId)} is running on another job; this job was refused ` +
        "(whenSessionBusy: 'fail'). Enqueue it again after that job finished, or use whenSessionBusy: 'wait'.",
    );
  }
}

/**
 * The worker lost a session's lock while it ran (it could not renew it in time: a paused process,
 * a Redis outage), so another worker may own the session now. The run was stopped without
 * writing another checkpoint.
 */
export class SessionLockLostError extends AgentMachineError {
  static override get name(): string {
    return 'SessionLockLostError';
  }

  constructor(
    readonly sessionId: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(
      'SESSION_LOCK_LOST',
      `The lock of session ${JSON.stringify(sessionId)} was lost while its run went on (${detail}); the ` +
        'run was stopped without writing another checkpoint. The job is retried and resumes from the ' +
        'last checkpoint. Raise sessionLockTtlMs if the worker process pauses for long.',
      options,
    );
  }
}

/** A job failed on the worker; `errorName` and `errorCode` name the worker's error. */
export class AgentJobFailedError extends AgentMachineError {
  static override get name(): string {
    return 'AgentJobFailedError';
  }

  constructor(
    readonly jobId: string,
    readonly sessionId: string,
    /** The class name of the worker's error (`UnknownAgentError`), or `Error` when unknown. */
    readonly errorName: string,
    /** Its code (`UNKNOWN_AGENT`), or null for an error without one. */
    readonly errorCode: string | null,
    /** The failed reason as BullMQ recorded it. */
    readonly reason: string,
  ) {
    super('AGENT_JOB_FAILED', `Agent job ${jobId} (session ${JSON.stringify(sessionId)}) failed: ${reason}`);
  }
}

/** `job.finished({ timeoutMs })` gave up waiting; the job itself goes on. */
export class AgentJobTimeoutError extends AgentMachineError {
  static override get name(): string {
    return 'AgentJobTimeoutError';
  }

  constructor(
    readonly jobId: string,
    readonly timeoutMs: number,
    options?: { cause?: unknown },
  ) {
    super(
      'AGENT_JOB_TIMEOUT',
      `Agent job ${jobId} did not finish within ${timeoutMs} ms of waiting; the job itself goes on. ` +
        'Wait again with job.finished(), or look at the workers.',
      options,
    );
  }
}

/** A chat job (one with a `chatStream`) reached a worker created without `streams`. */
export class NoStreamStoreError extends AgentMachineError {
  static override get name(): string {
    return 'NoStreamStoreError';
  }

  constructor(readonly sessionId: string) {
    super(
      'NO_STREAM_STORE',
      `The job for chat "${sessionId}" writes to a chat stream, but this worker has no stream store: ` +
        'give createAgentWorker({ streams }) the StreamStore the chat handlers use (a RedisStreamStore).',
    );
  }
}

/**
 * Redis could not be reached within `connectTimeoutMs` (refused, unreachable, a Cluster whose
 * slots could not be read): `address` names what was tried, as the caller gave it.
 */
export class RedisUnreachableError extends AgentMachineError {
  static override get name(): string {
    return 'RedisUnreachableError';
  }

  constructor(
    /** The address tried: `host:port`, a socket path, or a Cluster's startup nodes. */
    readonly address: string,
    readonly timeoutMs: number,
    options?: { cause?: unknown },
  ) {
    const cause = options?.cause instanceof Error ? ` (last error: ${options.cause.message})` : '';
    super(
      'REDIS_UNREACHABLE',
      `Redis at ${address} could not be reached within ${timeoutMs} ms${cause}. Check the connection ` +
        "options (host, port, password, tls; a Cluster's startup nodes) and that the server runs; " +
        'connectTimeoutMs sets how long to wait.',
      options,
    );
  }
}

/**
 * A poison session: its runs were cut by the death of their worker `deaths` times in a row without
 * a new checkpoint in between (option `maxSessionCrashes` of createAgentWorker), so it is not taken
 * over again: its job fails for good. The session is as its last checkpoint left it, and loads.
 */
export class PoisonSessionError extends AgentMachineError {
  static override get name(): string {
    return 'PoisonSessionError';
  }

  constructor(
    readonly sessionId: string,
    readonly deaths: number,
  ) {
    super(
      'POISON_SESSION',
      `Session ${JSON.stringify(sessionId)} was running on a worker that died ${deaths} times in a row ` +
        'without a new checkpoint in between (maxSessionCrashes): its job fails instead of killing more ' +
        'workers. The session loads as its last checkpoint left it; find what kills the worker (memory, a ' +
        'native tool), then enqueue a resume.',
    );
  }
}

/**
 * `job.finished()` found the job gone from Redis before it finished (Redis restarted without
 * persistence, the queue was emptied, the job removed): it will never finish. Its session holds
 * what its run checkpointed; enqueue a resume to go on.
 */
export class AgentJobLostError extends AgentMachineError {
  static override get name(): string {
    return 'AgentJobLostError';
  }

  constructor(
    readonly jobId: string,
    readonly sessionId: string,
  ) {
    super(
      'JOB_LOST',
      `Agent job ${jobId} (session ${JSON.stringify(sessionId)}) is no longer in Redis and did not ` +
        'finish (a Redis restart without persistence, or the job was removed). Its session holds what ' +
        'was checkpointed: enqueue a resume to go on.',
    );
  }
}
