export {
  type AgentClient,
  type AgentClientOptions,
  type AgentJob,
  type AgentJobResult,
  createAgentClient,
  type DecideRequest,
  type EnqueueOptions,
  type ExecuteRequest,
  type ResumeRequest,
} from './agent-client';
export {
  type AgentJobData,
  AgentJobName,
  type AgentJobRequest,
  type AgentJobReturnValue,
  type AgentStepProgress,
  checkAgentJob,
  DEFAULT_QUEUE_NAME,
  type DecideJobData,
  type ExecuteJobData,
  failureReason,
  JOB_METADATA_KEY,
  parseAgentJob,
  parseFailureReason,
  type ResumeJobData,
} from './agent-job';
export { type AgentWorker, createAgentWorker } from './agent-worker';
export * from './errors';
export {
  DEFAULT_SESSION_KEY_PREFIX,
  RedisSessionStore,
  type RedisSessionStoreOptions,
} from './redis-session-store';
export { RedisStreamStore, type RedisStreamStoreOptions } from './redis-stream-store';
export type {
  JobOptions,
  RedisClient,
  RedisConnection,
  RedisConnectionOptions,
  RedisLockCommands,
} from './redis-types';
export {
  DEFAULT_SESSION_LOCK_PREFIX,
  DEFAULT_SESSION_LOCK_TTL_MS,
  SessionLock,
  SessionLocks,
  type SessionLocksOptions,
} from './session-lock';
export type { AgentWorkerOptions } from './worker-options';
