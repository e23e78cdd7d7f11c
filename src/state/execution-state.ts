import { type AgentError, decodeAgentError } from './agent-error';
import { AgentStep } from './agent-step';
import { AppendOnlyList } from './append-only-list';
import { ApprovalRequest } from './approval';
import { decodeApprovalFields, encodeApprovalFields } from './approval-codec';
import { ExecutionContinuation } from './execution-continuation';
import { ExecutionStatus } from './execution-status';
import { frozenList } from './frozen-list';
import { newId } from './ids';
import { decodeMessage, type Message, type MessageDecoder } from './message';
import {
  type ExecutionStateJSON,
  executionStateSchema,
  type MessageJSON,
  type StoredExecutionStateJSON,
  type StoredStepJSON,
} from './schemas';
import { StepExecution } from './step-execution';
import type { StopSignal } from './stop-signal';
import { Usage } from './usage';
import { validate } from './validation';

/**
 * A step's input messages from its stored form (`path` names them in the document). Inside an
 * AgentState they may refer to the stored conversation (`$ref`); in a part's own document they are
 * written out.
 */
export type StepInputs = (step: StoredStepJSON, path: string) => readonly Message[] | AppendOnlyList<Message>;

const writtenOut: StepInputs = (step) => (step.inputMessages as MessageJSON[]).map(decodeMessage);

interface ExecutionStateProps {
  readonly executionId: string;
  readonly status: ExecutionStatus;
  readonly startedAt: number;
  readonly completedAt: number | null;
  readonly stepExecutions: AppendOnlyList<StepExecution>;
  readonly continuation: ExecutionContinuation;
  readonly currentStepStartedAt: number | null;
  readonly currentStep: AgentStep | null;
  /** Tool calls of the step in flight waiting for a person; the step is then kept when serialized. */
  readonly approval: ApprovalRequest | null;
  /** Errors that happened outside any step (hooks before or after the steps). */
  readonly errors: readonly AgentError[];
  /** Sum of the usage of `stepExecutions`, kept so that reading usage never walks the history. */
  readonly completedUsage: Usage;
}

/** One execution: its id, status, timing, completed steps, continuation and the step in flight. */
export class ExecutionState {
  private constructor(private readonly props: ExecutionStateProps) {}

  static fromJSON(data: unknown): ExecutionState {
    return ExecutionState.fromParsed(validate(executionStateSchema, data, 'ExecutionState'), writtenOut);
  }

  /**
   * @internal from a validated document, or the part of one that holds it, reading step inputs with
   * `inputs` and making its messages with `decode`
   */
  static fromParsed(
    json: ExecutionStateJSON | StoredExecutionStateJSON,
    inputs: StepInputs,
    decode: MessageDecoder = decodeMessage,
  ): ExecutionState {
    const steps = json.stepExecutions.map((s, i) =>
      StepExecution.fromParsed(
        s,
        inputs(s.step, `execution.stepExecutions[${i}].step.inputMessages`),
        decode,
      ),
    );
    const waiting = json.awaitingApproval;
    const currentStep =
      waiting === null
        ? null
        : AgentStep.fromParsed(
            waiting.step,
            inputs(waiting.step, 'execution.awaitingApproval.step.inputMessages'),
            decode,
          );
    const finished = (id: string) =>
      currentStep?.toolExecutions().some((e) => e.toolCallId() === id) ?? false;
    return ExecutionState.restore({
      executionId: json.executionId,
      status: json.status,
      startedAt: Date.parse(json.startedAt),
      completedAt: json.completedAt === null ? null : Date.parse(json.completedAt),
      stepExecutions: AppendOnlyList.of(steps),
      continuation: ExecutionContinuation.fromParsed(json.continuation),
      errors: json.errors.map(decodeAgentError),
      currentStep,
      currentStepStartedAt: waiting === null ? null : Date.parse(waiting.startedAt),
      // a saved intent is a crash's trace: its unsafe calls without a result wait as interrupted
      approval:
        waiting === null ? null : ApprovalRequest.interrupting(decodeApprovalFields(waiting), finished),
    });
  }

  static fresh(executionId: string = newId(), at = Date.now()): ExecutionState {
    return new ExecutionState({
      executionId,
      status: ExecutionStatus.InProgress,
      startedAt: at,
      completedAt: null,
      stepExecutions: AppendOnlyList.empty(),
      continuation: ExecutionContinuation.fresh(),
      currentStepStartedAt: null,
      currentStep: null,
      approval: null,
      errors: frozenList<AgentError>([]),
      completedUsage: Usage.zero,
    });
  }

  /** @internal used by deserialization */
  static restore(props: Omit<ExecutionStateProps, 'completedUsage'>): ExecutionState {
    let completedUsage = Usage.zero;
    for (const step of props.stepExecutions) completedUsage = Usage.add(completedUsage, step.usage());
    return new ExecutionState({ ...props, completedUsage });
  }

  executionId(): string {
    return this.props.executionId;
  }
  status(): ExecutionStatus {
    return this.props.status;
  }
  startedAt(): Date {
    return new Date(this.props.startedAt);
  }
  startedAtMs(): number {
    return this.props.startedAt;
  }
  completedAt(): Date | null {
    return this.props.completedAt === null ? null : new Date(this.props.completedAt);
  }
  stepExecutions(): readonly StepExecution[] {
    return this.props.stepExecutions.toArray();
  }
  stepExecutionList(): AppendOnlyList<StepExecution> {
    return this.props.stepExecutions;
  }
  lastStepExecution(): StepExecution | null {
    return this.props.stepExecutions.last() ?? null;
  }
  stepCount(): number {
    return this.props.stepExecutions.size;
  }
  continuation(): ExecutionContinuation {
    return this.props.continuation;
  }
  currentStep(): AgentStep | null {
    return this.props.currentStep;
  }
  currentStepStartedAt(): Date | null {
    return this.props.currentStepStartedAt === null ? null : new Date(this.props.currentStepStartedAt);
  }
  errors(): readonly AgentError[] {
    return this.props.errors;
  }
  usage(): Usage {
    const current = this.props.currentStep;
    return current ? Usage.add(this.props.completedUsage, current.usage()) : this.props.completedUsage;
  }
  /** Seconds from the start to completion, or to `now` while running. */
  duration(now = Date.now()): number {
    return ((this.props.completedAt ?? now) - this.props.startedAt) / 1000;
  }

  /**
   * The seed's priority chain, for the step in flight or, once it is recorded, the step just
   * recorded (with the continuation request it ended with): a stop signal without a continuation
   * request stops; a continuation request goes on; pending tool calls go on; anything else stops.
   */
  shouldStop(): boolean {
    const { continuation, currentStep } = this.props;
    const last = currentStep ? null : this.props.stepExecutions.last();
    const requested = last
      ? last.continuation().isContinuationRequested()
      : continuation.isContinuationRequested();
    if (continuation.hasStopSignals() && !requested) return true;
    if (requested) return false;
    const step = currentStep ?? last?.step();
    return !step?.hasToolCalls();
  }

  /** The same execution under another id: one made before it started gets its own when it starts. */
  withExecutionId(executionId: string): ExecutionState {
    return new ExecutionState({ ...this.props, executionId });
  }
  withStatus(status: ExecutionStatus): ExecutionState {
    return new ExecutionState({ ...this.props, status });
  }
  withStopSignal(signal: StopSignal): ExecutionState {
    return new ExecutionState({
      ...this.props,
      continuation: this.props.continuation.withStopSignal(signal),
    });
  }
  withContinuationRequested(requested = true): ExecutionState {
    return new ExecutionState({
      ...this.props,
      continuation: this.props.continuation.withContinuationRequested(requested),
    });
  }
  withError(error: AgentError): ExecutionState {
    return new ExecutionState({ ...this.props, errors: Object.freeze([...this.props.errors, error]) });
  }
  withStepStarted(at = Date.now()): ExecutionState {
    return new ExecutionState({
      ...this.props,
      currentStepStartedAt: at,
      currentStep: null,
      approval: null,
      continuation: this.props.continuation.withContinuationRequested(false),
    });
  }
  approval(): ApprovalRequest | null {
    return this.props.approval;
  }
  withApproval(approval: ApprovalRequest | null): ExecutionState {
    return new ExecutionState({ ...this.props, approval });
  }
  withCurrentStep(step: AgentStep): ExecutionState {
    return new ExecutionState({ ...this.props, currentStep: step });
  }
  /**
   * Appends the step in flight as a StepExecution and clears the transient fields. The
   * continuation request ends with the step; the stop signals stay.
   */
  withCurrentStepRecorded(at = Date.now()): ExecutionState {
    const step = this.props.currentStep;
    if (step === null) return this;
    const stepExecution = StepExecution.of(
      step,
      this.props.continuation,
      this.props.currentStepStartedAt ?? at,
      at,
    );
    return new ExecutionState({
      ...this.props,
      stepExecutions: this.props.stepExecutions.append(stepExecution),
      completedUsage: Usage.add(this.props.completedUsage, step.usage()),
      currentStep: null,
      currentStepStartedAt: null,
      approval: null,
      continuation: this.props.continuation.withContinuationRequested(false),
    });
  }
  withCompleted(status: ExecutionStatus, at = Date.now()): ExecutionState {
    return new ExecutionState({ ...this.props, status, completedAt: at });
  }

  /**
   * The serialized form. The step in flight (`currentStep`, `currentStepStartedAt`) is transient
   * and left out, unless it waits for approval: then it is kept, so that a person's decision can
   * be delivered to another process.
   */
  toJSON() {
    return this.serialize((step) => step.toJSON());
  }

  /** The serialized form with each step (recorded, or awaiting approval) written by `encodeStep`. */
  serialize<T>(encodeStep: (step: AgentStep) => T) {
    return this.encode(
      encodeStep,
      this.props.stepExecutions.toArray().map((s) => s.serialize(encodeStep)),
    );
  }

  /**
   * @internal the serialized form without its recorded steps (the journal writes them apart, as
   * `StepExecution.serialize` does); every other field as `toJSON` writes it.
   */
  serializeHead<T>(encodeStep: (step: AgentStep) => T) {
    const { stepExecutions: _written, ...head } = this.encode(encodeStep, null);
    return head;
  }

  private encode<T, S>(encodeStep: (step: AgentStep) => T, stepExecutions: S) {
    const { approval, currentStep } = this.props;
    return {
      executionId: this.props.executionId,
      status: this.props.status,
      startedAt: new Date(this.props.startedAt).toISOString(),
      completedAt: this.props.completedAt === null ? null : new Date(this.props.completedAt).toISOString(),
      stepExecutions,
      continuation: this.props.continuation.toJSON(),
      errors: this.props.errors,
      awaitingApproval:
        approval && currentStep
          ? {
              step: encodeStep(currentStep),
              startedAt: new Date(this.props.currentStepStartedAt ?? approval.requestedAt).toISOString(),
              ...encodeApprovalFields(approval),
            }
          : null,
    };
  }
}
