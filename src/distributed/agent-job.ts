import { z } from 'zod';
import type { ChatJobStream } from '../chat/chat-pool-handler';
import { isValidSessionId } from '../persistence/session-id';
import type { ApprovalInput } from '../runtime/approvals';
import { AgentState } from '../state/agent-state';
import type { AgentStepType } from '../state/agent-step-type';
import { AgentMachineError, InvalidStateError } from '../state/errors';
import type { ExecutionStatus } from '../state/execution-status';
import type { AgentStateJSON } from '../state/schemas';
import type { Usage } from '../state/usage';
import { InvalidJobPayloadError } from './errors';

/** The queue the worker and the client use when none is named. */
export const DEFAULT_QUEUE_NAME = 'agent-machine';

/**
 * The state metadata key under which a worker notes the job that started the session's current
 * execution (`<queue>/<job id>`), in the same save as the started state. A job handed to another
 * worker (stalled, or released at shutdown) finds its own mark and resumes instead of starting over.
 */
export const JOB_METADATA_KEY = 'agentMachine.job';

/** The job names a worker runs. */
export const AgentJobName = { Execute: 'execute', Resume: 'resume', Decide: 'decide' } as const;
export type AgentJobName = (typeof AgentJobName)[keyof typeof AgentJobName];

const agentName = z.string().min(1, 'an agent name is required').max(200);
const sessionId = z
  .string()
  .refine(isValidSessionId, 'not a valid session id (1 to 200 characters of A-Z a-z 0-9 . _ -)');

/** The chat stream a job writes its run's UI message chunks to (a chat served by the pool). */
const chatStream = z
  .strictObject({
    streamId: z.string().min(1).max(200),
    continuation: z
      .strictObject({
        messageId: z.string(),
        toolCallIds: z.array(z.string()),
        denied: z.array(z.string()),
        prefix: z.array(z.looseObject({ type: z.string() })),
      })
      .optional(),
  })
  .optional();

/** Set by a client that reads final states from the store: the job's result holds no copy of the state. */
const leanResult = z.literal(true).optional();
/** Set by a client that listens to the job's steps: the worker reports each as the job's progress. */
const progress = z.literal(true).optional();
/** The budget ledger scopes the job's run charges (`ExecuteOptions.ledgerScopes`). */
const ledgerScopes = z.array(z.string().min(1)).optional();

const executeData = z
  .strictObject({
    agent: agentName,
    sessionId,
    ledgerScopes,
    state: z.record(z.string(), z.unknown()).optional(),
    message: z.string().optional(),
    chatStream,
    leanResult,
    progress,
  })
  .refine((d) => d.state !== undefined || d.message !== undefined, {
    message: 'an execute job needs a state, a message, or both',
  });

const resumeData = z.strictObject({ agent: agentName, sessionId, leanResult, progress, ledgerScopes });

const decisionRoute = {
  toolCallId: z.string().min(1),
  path: z.array(z.string().min(1)).optional(),
  callPath: z.array(z.string().min(1)).optional(),
  signature: z.string().optional(),
};
const decideData = z.strictObject({
  agent: agentName,
  sessionId,
  ledgerScopes,
  chatStream,
  leanResult,
  progress,
  decisions: z
    .array(
      z.union([
        z.strictObject({ ...decisionRoute, type: z.literal('approve') }),
        z.strictObject({ ...decisionRoute, type: z.literal('reject'), reason: z.string().optional() }),
        z.strictObject({ ...decisionRoute, type: z.literal('edit'), args: z.unknown() }),
        z.strictObject({ ...decisionRoute, type: z.literal('complete'), result: z.unknown() }),
      ]),
    )
    .min(1, 'a decide job needs at least one decision'),
});

/** The data of an execute job as it travels through the queue. */
export interface ExecuteJobData {
  readonly agent: string;
  readonly sessionId: string;
  /** The budget ledger scopes the job's run charges. */
  readonly ledgerScopes?: readonly string[];
  /** `AgentState.toJSON()`; without it the stored session (or an empty state) is used. */
  readonly state?: AgentStateJSON;
  /** A user message appended to the state before the run. */
  readonly message?: string;
  /** Where the run's UI message chunks go (a chat served by the pool; the worker needs `streams`). */
  readonly chatStream?: ChatJobStream;
  /** The job's result holds no copy of the final state (the client reads it from the store). */
  readonly leanResult?: true;
  /** The worker reports each step as the job's progress (someone listens). */
  readonly progress?: true;
}

/** The data of a resume job. */
export interface ResumeJobData {
  readonly agent: string;
  readonly sessionId: string;
  /** The job's result holds no copy of the final state (the client reads it from the store). */
  readonly leanResult?: true;
  /** The worker reports each step as the job's progress (someone listens). */
  readonly progress?: true;
  /** The budget ledger scopes the job's run charges. */
  readonly ledgerScopes?: readonly string[];
}

/** The data of a decide job: decisions on the calls a session waits for (`agent.decide`). */
export interface DecideJobData {
  readonly agent: string;
  readonly sessionId: string;
  /** The budget ledger scopes the job's run charges. */
  readonly ledgerScopes?: readonly string[];
  readonly decisions: readonly ApprovalInput[];
  /** Where the run's UI message chunks go (a chat served by the pool). */
  readonly chatStream?: ChatJobStream;
  /** The job's result holds no copy of the final state (the client reads it from the store). */
  readonly leanResult?: true;
  /** The worker reports each step as the job's progress (someone listens). */
  readonly progress?: true;
}

export type AgentJobData = ExecuteJobData | ResumeJobData | DecideJobData;

/** A job as the worker understands it, after validation. */
export type AgentJobRequest =
  | {
      readonly kind: 'execute';
      readonly agent: string;
      readonly sessionId: string;
      readonly state: AgentState | null;
      readonly message: string | null;
      readonly ledgerScopes?: readonly string[];
      /** Only on a chat's job: where its run's UI message chunks go. */
      readonly chatStream?: ChatJobStream;
    }
  | {
      readonly kind: 'resume';
      readonly agent: string;
      readonly sessionId: string;
      readonly ledgerScopes?: readonly string[];
    }
  | {
      readonly kind: 'decide';
      readonly agent: string;
      readonly sessionId: string;
      readonly decisions: readonly ApprovalInput[];
      readonly ledgerScopes?: readonly string[];
      /** Only on a chat's job: where its run's UI message chunks go. */
      readonly chatStream?: ChatJobStream;
    };

/**
 * Validates a job's name and data (zod; the state with `AgentState.fromJSON`). Raises
 * InvalidJobPayloadError naming the first bad field.
 *
 * @example
 * parseAgentJob('resume', { agent: 'support', sessionId: 'chat-42' }); // { kind: 'resume', ... }
 * parseAgentJob('resume', { agent: 'support' });                       // throws INVALID_JOB_PAYLOAD at data.sessionId
 */
export function parseAgentJob(name: unknown, data: unknown): AgentJobRequest {
  const checked = checkAgentJob(name, data);
  if (name === AgentJobName.Resume) return { kind: 'resume', ...(checked as ResumeJobData) };
  if (name === AgentJobName.Decide) return { kind: 'decide', ...(checked as DecideJobData) };
  const execute = checked as z.infer<typeof executeData>;
  let state: AgentState | null = null;
  if (execute.state !== undefined) {
    try {
      state = AgentState.fromJSON(execute.state);
    } catch (error) {
      if (error instanceof InvalidStateError)
        throw new InvalidJobPayloadError(`data.state${error.path ? `.${error.path}` : ''}`, error.message);
      throw error;
    }
  }
  return {
    kind: 'execute',
    agent: execute.agent,
    sessionId: execute.sessionId,
    state,
    message: execute.message ?? null,
    ...(execute.chatStream && { chatStream: execute.chatStream as ChatJobStream }),
    ...(execute.ledgerScopes && { ledgerScopes: execute.ledgerScopes }),
  };
}

/**
 * Checks a job's name and the shape of its data (zod), without decoding the state. Raises
 * InvalidJobPayloadError naming the first bad field.
 */
export function checkAgentJob(name: unknown, data: unknown): AgentJobData {
  if (name !== AgentJobName.Execute && name !== AgentJobName.Resume && name !== AgentJobName.Decide)
    throw new InvalidJobPayloadError(
      'name',
      `${JSON.stringify(name)} is not "execute", "resume" or "decide"`,
    );
  const schema =
    name === AgentJobName.Execute ? executeData : name === AgentJobName.Resume ? resumeData : decideData;
  const parsed = schema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = ['data', ...(issue?.path ?? []).map(String)].join('.');
    throw new InvalidJobPayloadError(path, issue?.message ?? 'invalid');
  }
  return parsed.data as AgentJobData;
}

/** What a worker reports after each recorded step (`job.updateProgress`; the client's `onProgress`). */
export interface AgentStepProgress {
  readonly type: 'step.finished';
  readonly sessionId: string;
  readonly agent: string;
  /** The worker that ran the step. */
  readonly workerId: string;
  readonly executionId: string;
  readonly stepNumber: number;
  readonly stepId: string;
  readonly stepType: AgentStepType;
  readonly finishReason: string | null;
  readonly usage: Usage;
  readonly errors: readonly {
    readonly name: string;
    readonly code: string | null;
    readonly message: string;
  }[];
  readonly durationMs: number;
}

/** A finished job's return value as stored by BullMQ. */
export interface AgentJobReturnValue {
  readonly sessionId: string;
  readonly agent: string;
  /** The worker that finished the run. */
  readonly workerId: string;
  /** The session's stored version after the run's last checkpoint. */
  readonly version: number | null;
  readonly status: ExecutionStatus;
  /** The final state; left out for a job with `leanResult` (the client reads it from the store). */
  readonly state?: AgentStateJSON;
}

const REASON = /^([A-Za-z_$][\w$]*)(?: \[([A-Z0-9_]+)\])?: ([\s\S]*)$/;

/**
 * A job's failed reason: `<ErrorName> [<CODE>]: <message>` (the code only for errors that have
 * one), so that the client can tell what failed from BullMQ's failedReason.
 */
export function failureReason(error: unknown): string {
  if (!(error instanceof Error)) return `Error: ${String(error)}`;
  const raw = (error as Error & { code?: unknown }).code;
  const code = error instanceof AgentMachineError ? error.code : typeof raw === 'string' ? raw : null;
  return `${error.name || 'Error'}${code && /^[A-Z0-9_]+$/.test(code) ? ` [${code}]` : ''}: ${error.message}`;
}

/** The error name and code a failed reason names (see `failureReason`). */
export function parseFailureReason(reason: string): { name: string; code: string | null; message: string } {
  const match = REASON.exec(reason);
  if (!match) return { name: 'Error', code: null, message: reason };
  return { name: match[1] as string, code: match[2] ?? null, message: match[3] as string };
}
