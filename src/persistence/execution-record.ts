import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import { AgentState } from '../state/agent-state';
import { InvalidStateError } from '../state/errors';
import { ExecutionStatus } from '../state/execution-status';
import { usageSchema } from '../state/schemas';
import type { StepExecution } from '../state/step-execution';
import { StopReason, stopReasons } from '../state/stop-reason';
import type { Usage } from '../state/usage';
import { validate } from '../state/validation';
import { ExecutionNotFinishedError } from './errors';

/** The statuses an execution can end with. */
export type FinishedStatus =
  | typeof ExecutionStatus.Completed
  | typeof ExecutionStatus.Stopped
  | typeof ExecutionStatus.Failed;
const finishedStatuses = [
  ExecutionStatus.Completed,
  ExecutionStatus.Stopped,
  ExecutionStatus.Failed,
] as const;

const timestamp = z.iso.datetime({ offset: true });

const executionRecordSchema = z.strictObject({
  executionId: z.string().min(1),
  agentId: z.string().min(1),
  parentAgentId: z.string().min(1).nullable(),
  startedAt: timestamp,
  completedAt: timestamp,
  status: z.enum(finishedStatuses),
  stopReason: z.enum(stopReasons),
  usage: usageSchema,
  stepCount: z.number().int().nonnegative(),
  // Validated by AgentState.fromJSON, which names the bad field.
  finalState: z.record(z.string(), z.unknown()),
});

/** The serialized form of an ExecutionRecord (`toJSON()`). */
export type ExecutionRecordJSON = Omit<z.infer<typeof executionRecordSchema>, 'finalState'> & {
  finalState: ReturnType<AgentState['toJSON']>;
};

/**
 * What is kept of one finished execution (seed 001): its identity, timing, outcome and usage, and
 * the final state, from which the agent can be rewound to that point (`stateFromRecord`). Built
 * from the state `agent.execute()` resolved with; the summary fields are read from that state, so
 * they always agree with it.
 *
 * @example
 * const done = await agent.execute(state);
 * const record = ExecutionRecord.fromState(done);
 * record.finalStatus;   // 'completed'
 * record.steps.length;  // 2
 * const next = stateFromRecord(record).withUserMessage('And 4 + 4?');
 */
export class ExecutionRecord {
  readonly executionId: string;
  readonly agentId: string;
  readonly parentAgentId: string | null;
  /** How the execution ended (seed 001's `finalStatus`). */
  readonly finalStatus: FinishedStatus;
  /** @deprecated Use `finalStatus` (seed 001's name); the same value. */
  readonly status: FinishedStatus;
  /** The execution's stop reason; `unknown` for an end no stop signal explains. */
  readonly stopReason: StopReason;
  /** Token usage and cost of the whole execution (seed 001's `totalUsage`). */
  readonly totalUsage: Usage;
  /** @deprecated Use `totalUsage` (seed 001's name); the same value. */
  readonly usage: Usage;
  /** @deprecated Use `steps.length`; seed 001's record has the steps themselves. */
  readonly stepCount: number;
  /** The state as the execution left it (its execution still attached). */
  readonly finalState: AgentState;
  private readonly startedAtMs: number;
  private readonly completedAtMs: number;

  private constructor(
    finalState: AgentState,
    status: FinishedStatus,
    startedAt: number,
    completedAt: number,
  ) {
    this.executionId = finalState.executionId() as string;
    this.agentId = finalState.agentId();
    this.parentAgentId = finalState.parentAgentId();
    this.finalStatus = status;
    this.status = status;
    this.stopReason = finalState.stopReason() ?? StopReason.Unknown;
    this.totalUsage = finalState.usage();
    this.usage = this.totalUsage;
    this.stepCount = finalState.stepCount();
    this.finalState = finalState;
    this.startedAtMs = startedAt;
    this.completedAtMs = completedAt;
    Object.freeze(this);
  }

  /**
   * The record of the execution `state` has just finished. Raises ExecutionNotFinishedError for a
   * state without an execution, or whose execution is still in progress.
   */
  static fromState(state: AgentState): ExecutionRecord {
    const execution = state.execution();
    const status = state.status();
    const completedAt = execution?.completedAt();
    if (!execution || !isFinished(status) || !completedAt)
      throw new ExecutionNotFinishedError(execution?.executionId() ?? null, status);
    return new ExecutionRecord(state, status, execution.startedAtMs(), completedAt.getTime());
  }

  /**
   * Builds a record from its `toJSON()` form. Raises InvalidStateError naming the first bad field
   * (`finalState.<path>` inside the state), or a summary field that disagrees with the final state.
   */
  static fromJSON(data: unknown): ExecutionRecord {
    const json = validate(executionRecordSchema, data, 'ExecutionRecord');
    let finalState: AgentState;
    try {
      finalState = AgentState.fromJSON(json.finalState);
    } catch (error) {
      if (!(error instanceof InvalidStateError)) throw error;
      const path = error.path ? `finalState.${error.path}` : 'finalState';
      throw new InvalidStateError(path, error.detail, 'ExecutionRecord', { cause: error });
    }
    let record: ExecutionRecord;
    try {
      record = ExecutionRecord.fromState(finalState);
    } catch (error) {
      if (!(error instanceof ExecutionNotFinishedError)) throw error;
      throw new InvalidStateError('finalState.execution', error.message, 'ExecutionRecord', { cause: error });
    }
    const derived = record.toSummary();
    const stored: Record<string, unknown> = {
      ...json,
      startedAt: new Date(json.startedAt).toISOString(),
      completedAt: new Date(json.completedAt).toISOString(),
    };
    for (const key of Object.keys(derived) as (keyof typeof derived)[]) {
      if (!isDeepStrictEqual(stored[key], derived[key]))
        throw new InvalidStateError(
          key,
          `is ${JSON.stringify(json[key])}, but the final state says ${JSON.stringify(derived[key])}; ` +
            'the record was altered',
          'ExecutionRecord',
        );
    }
    return record;
  }

  /** Every step of the execution, in order (seed 001's `steps`), as the final state holds them. */
  get steps(): readonly StepExecution[] {
    return this.finalState.stepExecutions();
  }
  get startedAt(): Date {
    return new Date(this.startedAtMs);
  }
  get completedAt(): Date {
    return new Date(this.completedAtMs);
  }
  /** Seconds from start to completion. */
  get durationSeconds(): number {
    return (this.completedAtMs - this.startedAtMs) / 1000;
  }

  toJSON(): ExecutionRecordJSON {
    return { ...this.toSummary(), finalState: this.finalState.toJSON() };
  }

  private toSummary() {
    return {
      executionId: this.executionId,
      agentId: this.agentId,
      parentAgentId: this.parentAgentId,
      startedAt: new Date(this.startedAtMs).toISOString(),
      completedAt: new Date(this.completedAtMs).toISOString(),
      status: this.finalStatus,
      stopReason: this.stopReason,
      usage: { ...this.totalUsage },
      stepCount: this.finalState.stepCount(),
    };
  }
}

/**
 * Rewind: the state the agent was in when `record`'s execution ended, ready for its next
 * execution (`forNextExecution()`: the session, its messages and metadata kept, the execution
 * cleared). Everything that happened after that execution is not in it.
 *
 * @example
 * const [first] = await executions.getByAgent(agentId);
 * const again = await agent.execute(stateFromRecord(first).withUserMessage('Try another way'));
 */
export function stateFromRecord(record: ExecutionRecord): AgentState {
  return record.finalState.forNextExecution();
}

function isFinished(status: ExecutionStatus): status is FinishedStatus {
  return (finishedStatuses as readonly string[]).includes(status);
}
