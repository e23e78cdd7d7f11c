/**
 * Names the main entry exported before they moved to `agent-machine/distributed`
 * (the worker pool): deprecated there for one release, each its new home's own value.
 */
import * as distributed from '../distributed/index';

/** @deprecated Import from `agent-machine/distributed`. */
export type AgentClient = distributed.AgentClient;
/** @deprecated Import from `agent-machine/distributed`. */
export type AgentClientOptions = distributed.AgentClientOptions;
/** @deprecated Import from `agent-machine/distributed`. */
export type AgentJob = distributed.AgentJob;
/** @deprecated Import from `agent-machine/distributed`. */
export type AgentJobData = distributed.AgentJobData;
/** @deprecated Import from `agent-machine/distributed`. */
export const AgentJobFailedError = distributed.AgentJobFailedError;
/** @deprecated Import from `agent-machine/distributed`. */
export type AgentJobFailedError = distributed.AgentJobFailedError;
/** @deprecated Import from `agent-machine/distributed`. */
export const AgentJobLostError = distributed.AgentJobLostError;
/** @deprecated Import from `agent-machine/distributed`. */
export type AgentJobLostError = distributed.AgentJobLostError;
/** @deprecated Import from `agent-machine/distributed`. */
export const AgentJobName = distributed.AgentJobName;
/** @deprecated Import from `agent-machine/distributed`. */
export type AgentJobName = distributed.AgentJobName;
/** @deprecated Import from `agent-machine/distributed`. */
export type AgentJobRequest = distributed.AgentJobRequest;
/** @deprecated Import from `agent-machine/distributed`. */
export type AgentJobResult = distributed.AgentJobResult;
/** @deprecated Import from `agent-machine/distributed`. */
export type AgentJobReturnValue = distributed.AgentJobReturnValue;
/** @deprecated Import from `agent-machine/distributed`. */
export const AgentJobTimeoutError = distributed.AgentJobTimeoutError;
/** @deprecated Import from `agent-machine/distributed`. */
export type AgentJobTimeoutError = distributed.AgentJobTimeoutError;
/** @deprecated Import from `agent-machine/distributed`. */
export type AgentStepProgress = distributed.AgentStepProgress;
/** @deprecated Import from `agent-machine/distributed`. */
export type AgentWorker = distributed.AgentWorker;
/** @deprecated Import from `agent-machine/distributed`. */
export type AgentWorkerOptions = distributed.AgentWorkerOptions;
/** @deprecated Import from `agent-machine/distributed`. */
export const checkAgentJob = distributed.checkAgentJob;
/** @deprecated Import from `agent-machine/distributed`. */
export const createAgentClient = distributed.createAgentClient;
/** @deprecated Import from `agent-machine/distributed`. */
export const createAgentWorker = distributed.createAgentWorker;
/** @deprecated Import from `agent-machine/distributed`. */
export type DecideJobData = distributed.DecideJobData;
/** @deprecated Import from `agent-machine/distributed`. */
export type DecideRequest = distributed.DecideRequest;
/** @deprecated Import from `agent-machine/distributed`. */
export const DEFAULT_QUEUE_NAME = distributed.DEFAULT_QUEUE_NAME;
/** @deprecated Import from `agent-machine/distributed`. */
export const DEFAULT_SESSION_KEY_PREFIX = distributed.DEFAULT_SESSION_KEY_PREFIX;
/** @deprecated Import from `agent-machine/distributed`. */
export const DEFAULT_SESSION_LOCK_PREFIX = distributed.DEFAULT_SESSION_LOCK_PREFIX;
/** @deprecated Import from `agent-machine/distributed`. */
export const DEFAULT_SESSION_LOCK_TTL_MS = distributed.DEFAULT_SESSION_LOCK_TTL_MS;
/** @deprecated Import from `agent-machine/distributed`. */
export const DistributedDependencyMissingError = distributed.DistributedDependencyMissingError;
/** @deprecated Import from `agent-machine/distributed`. */
export type DistributedDependencyMissingError = distributed.DistributedDependencyMissingError;
/** @deprecated Import from `agent-machine/distributed`. */
export type EnqueueOptions = distributed.EnqueueOptions;
/** @deprecated Import from `agent-machine/distributed`. */
export type ExecuteJobData = distributed.ExecuteJobData;
/** @deprecated Import from `agent-machine/distributed`. */
export type ExecuteRequest = distributed.ExecuteRequest;
/** @deprecated Import from `agent-machine/distributed`. */
export const failureReason = distributed.failureReason;
/** @deprecated Import from `agent-machine/distributed`. */
export const InvalidJobPayloadError = distributed.InvalidJobPayloadError;
/** @deprecated Import from `agent-machine/distributed`. */
export type InvalidJobPayloadError = distributed.InvalidJobPayloadError;
/** @deprecated Import from `agent-machine/distributed`. */
export const JOB_METADATA_KEY = distributed.JOB_METADATA_KEY;
/** @deprecated Import from `agent-machine/distributed`. */
export type JobOptions = distributed.JobOptions;
/** @deprecated Import from `agent-machine/distributed`. */
export const NoStreamStoreError = distributed.NoStreamStoreError;
/** @deprecated Import from `agent-machine/distributed`. */
export type NoStreamStoreError = distributed.NoStreamStoreError;
/** @deprecated Import from `agent-machine/distributed`. */
export const parseAgentJob = distributed.parseAgentJob;
/** @deprecated Import from `agent-machine/distributed`. */
export const parseFailureReason = distributed.parseFailureReason;
/** @deprecated Import from `agent-machine/distributed`. */
export const PoisonSessionError = distributed.PoisonSessionError;
/** @deprecated Import from `agent-machine/distributed`. */
export type PoisonSessionError = distributed.PoisonSessionError;
/** @deprecated Import from `agent-machine/distributed`. */
export type RedisClient = distributed.RedisClient;
/** @deprecated Import from `agent-machine/distributed`. */
export type RedisConnection = distributed.RedisConnection;
/** @deprecated Import from `agent-machine/distributed`. */
export type RedisConnectionOptions = distributed.RedisConnectionOptions;
/** @deprecated Import from `agent-machine/distributed`. */
export type RedisLockCommands = distributed.RedisLockCommands;
/** @deprecated Import from `agent-machine/distributed`. */
export const RedisSessionStore = distributed.RedisSessionStore;
/** @deprecated Import from `agent-machine/distributed`. */
export type RedisSessionStore = distributed.RedisSessionStore;
/** @deprecated Import from `agent-machine/distributed`. */
export type RedisSessionStoreOptions = distributed.RedisSessionStoreOptions;
/** @deprecated Import from `agent-machine/distributed`. */
export const RedisStreamStore = distributed.RedisStreamStore;
/** @deprecated Import from `agent-machine/distributed`. */
export type RedisStreamStore = distributed.RedisStreamStore;
/** @deprecated Import from `agent-machine/distributed`. */
export type RedisStreamStoreOptions = distributed.RedisStreamStoreOptions;
/** @deprecated Import from `agent-machine/distributed`. */
export const RedisUnreachableError = distributed.RedisUnreachableError;
/** @deprecated Import from `agent-machine/distributed`. */
export type RedisUnreachableError = distributed.RedisUnreachableError;
/** @deprecated Import from `agent-machine/distributed`. */
export type ResumeJobData = distributed.ResumeJobData;
/** @deprecated Import from `agent-machine/distributed`. */
export type ResumeRequest = distributed.ResumeRequest;
/** @deprecated Import from `agent-machine/distributed`. */
export const SessionBusyError = distributed.SessionBusyError;
/** @deprecated Import from `agent-machine/distributed`. */
export type SessionBusyError = distributed.SessionBusyError;
/** @deprecated Import from `agent-machine/distributed`. */
export const SessionLock = distributed.SessionLock;
/** @deprecated Import from `agent-machine/distributed`. */
export type SessionLock = distributed.SessionLock;
/** @deprecated Import from `agent-machine/distributed`. */
export const SessionLockLostError = distributed.SessionLockLostError;
/** @deprecated Import from `agent-machine/distributed`. */
export type SessionLockLostError = distributed.SessionLockLostError;
/** @deprecated Import from `agent-machine/distributed`. */
export const SessionLocks = distributed.SessionLocks;
/** @deprecated Import from `agent-machine/distributed`. */
export type SessionLocks = distributed.SessionLocks;
/** @deprecated Import from `agent-machine/distributed`. */
export type SessionLocksOptions = distributed.SessionLocksOptions;
/** @deprecated Import from `agent-machine/distributed`. */
export const UnknownAgentError = distributed.UnknownAgentError;
/** @deprecated Import from `agent-machine/distributed`. */
export type UnknownAgentError = distributed.UnknownAgentError;
