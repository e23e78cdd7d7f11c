import type { AgentContext, MessageStore, ResponseFormat } from './agent-context';
import { STEERING_SECTION } from './agent-context';
import type { AgentError } from './agent-error';
import type { AgentStateProps, LlmConfig } from './agent-state-props';
import type { AgentStep } from './agent-step';
import type { AgentStepType } from './agent-step-type';
import type { AppendOnlyList } from './append-only-list';
import { ApprovalRequest } from './approval';
import type { ExecutionState } from './execution-state';
import { ExecutionStatus } from './execution-status';
import { Message } from './message';
import type { PendingApproval } from './pending-approval';
import { encodeAgentState } from './serialization';
import type { StepExecution } from './step-execution';
import { StopReason } from './stop-reason';
import type { StopSignal } from './stop-signal';
import type { ToolExecution } from './tool-execution';
import { Usage } from './usage';

/** An AgentState's fields, with the id its next implicit execution gets. */
export interface InternalProps extends AgentStateProps {
  /**
   * The id an execution made implicitly by a `with*` call between executions gets, so unchained
   * calls agree on it; `withExecutionStarted` draws a fresh one (seed 000).
   */
  readonly nextExecutionId: string;
}

/**
 * What an AgentState says (its identity, conversation, execution and output, and its JSON form):
 * the reading half of the class, apart from the changes AgentState adds in agent-state.ts.
 */
export abstract class AgentStateView {
  protected constructor(protected readonly props: InternalProps) {}

  // ---- identity and timing -------------------------------------------------------------------

  agentId(): string {
    return this.props.agentId;
  }
  /**
   * The version of the agent that last ran and saved this state (`createAgent({ version })`), or
   * null: saved before versions existed, or by an agent without one.
   */
  agentVersion(): string | null {
    return this.props.agentVersion ?? null;
  }
  parentAgentId(): string | null {
    return this.props.parentAgentId;
  }
  createdAt(): Date {
    return new Date(this.props.createdAt);
  }
  updatedAt(): Date {
    return new Date(this.props.updatedAt);
  }
  executionCount(): number {
    return this.props.executionCount;
  }
  /** Seconds elapsed in the current execution (to its completion if it ended); null without one. */
  executionDuration(now = Date.now()): number | null {
    return this.props.execution?.duration(now) ?? null;
  }
  llmConfig(): LlmConfig | null {
    return this.props.llmConfig;
  }

  // ---- context -------------------------------------------------------------------------------

  context(): AgentContext {
    return this.props.context;
  }
  store(): MessageStore {
    return this.props.context.store();
  }
  /**
   * The conversation: the stored messages, then the output of the step in flight (which joins the
   * store when the step is recorded).
   */
  messages(): readonly Message[] {
    const stored = this.props.context.messages();
    const current = this.props.execution?.currentStep();
    if (!current || current.outputMessages().length === 0) return stored;
    return [...stored, ...this.taggedOutput(current)];
  }
  /** The stored conversation as a shared list: O(1), for drivers that record their input. */
  messageList(): AppendOnlyList<Message> {
    return this.props.context.store().list();
  }
  metadata(): Readonly<Record<string, unknown>> {
    return this.props.context.metadata();
  }
  systemPrompt(): string {
    return this.props.context.systemPrompt();
  }
  responseFormat(): ResponseFormat {
    return this.props.context.responseFormat();
  }

  // ---- execution -----------------------------------------------------------------------------

  execution(): ExecutionState | null {
    return this.props.execution;
  }
  hasActiveExecution(): boolean {
    return this.props.execution?.status() === ExecutionStatus.InProgress;
  }
  /** Pending between executions. */
  status(): ExecutionStatus {
    return this.props.execution?.status() ?? ExecutionStatus.Pending;
  }
  executionId(): string | null {
    return this.props.execution?.executionId() ?? null;
  }
  /** Completed (recorded) steps of the current execution. */
  stepCount(): number {
    return this.props.execution?.stepCount() ?? 0;
  }
  steps(): readonly AgentStep[] {
    return this.stepExecutions().map((s) => s.step());
  }
  stepExecutions(): readonly StepExecution[] {
    return this.props.execution?.stepExecutions() ?? [];
  }
  lastStepExecution(): StepExecution | null {
    return this.props.execution?.lastStepExecution() ?? null;
  }
  /** The most recently completed step. */
  lastStep(): AgentStep | null {
    return this.lastStepExecution()?.step() ?? null;
  }
  lastStepType(): AgentStepType | null {
    return this.lastStep()?.stepType() ?? null;
  }
  /** The step in flight (transient: not serialized). */
  currentStep(): AgentStep | null {
    return this.props.execution?.currentStep() ?? null;
  }
  toolExecutions(): readonly ToolExecution[] {
    const recorded = this.steps().flatMap((s) => s.toolExecutions());
    const current = this.currentStep()?.toolExecutions() ?? [];
    return current.length ? [...recorded, ...current] : recorded;
  }
  lastToolExecution(): ToolExecution | null {
    const current = this.currentStep()?.toolExecutions();
    if (current?.length) return current[current.length - 1] ?? null;
    const list = this.props.execution?.stepExecutionList();
    if (!list) return null;
    for (let i = list.size - 1; i >= 0; i--) {
      const executions = list.at(i)?.step().toolExecutions() ?? [];
      if (executions.length) return executions[executions.length - 1] ?? null;
    }
    return null;
  }
  /** The tool-call approval the step in flight waits for, with the decisions taken so far; or null. */
  approval(): ApprovalRequest | null {
    return this.props.execution?.approval() ?? null;
  }
  /** The tool calls still waiting for a person's decision (`agent.decide()` delivers them). */
  pendingApprovals(): readonly PendingApproval[] {
    const approval = this.approval();
    const step = this.currentStep();
    return approval && step ? ApprovalRequest.pending(approval, step.requestedToolCalls()) : [];
  }
  /** The stop signal of highest priority raised in this execution. */
  stopSignal(): StopSignal | null {
    return this.props.execution?.continuation().highestStopSignal() ?? null;
  }
  /** Why the execution stopped: the highest signal's reason, Completed for a natural end, else null. */
  stopReason(): StopReason | null {
    const signal = this.stopSignal();
    if (signal) return signal.reason;
    return this.status() === ExecutionStatus.Completed ? StopReason.Completed : null;
  }
  /** Token usage and cost of the current execution (reset by `forNextExecution()`). */
  usage(): Usage {
    return this.props.execution?.usage() ?? Usage.zero;
  }
  hasErrors(): boolean {
    return this.errors().length > 0;
  }
  /** Errors of every step (tool errors included), then those of the execution outside any step. */
  errors(): readonly AgentError[] {
    const outside = this.props.execution?.errors() ?? [];
    const recorded = [...this.steps().flatMap((s) => s.errors()), ...outside];
    const current = this.currentStep()?.errors() ?? [];
    return current.length ? [...recorded, ...current] : recorded;
  }
  /** The seed's priority chain; true without an execution. */
  shouldStop(): boolean {
    return this.props.execution?.shouldStop() ?? true;
  }

  // ---- final output --------------------------------------------------------------------------

  private finalStep(): AgentStep | null {
    const step = this.currentStep() ?? this.lastStep();
    return step && step.stepType() === 'final_response' && step.outputText().trim() !== '' ? step : null;
  }
  hasFinalResponse(): boolean {
    return this.finalStep() !== null;
  }
  /** The final answer's text, or '' when there is none. */
  finalResponse(): string {
    return this.finalStep()?.outputText() ?? '';
  }
  /** The final answer parsed against the response format (see `responseFormat`), or null. */
  structuredOutput(): unknown {
    return this.finalStep()?.structuredOutput() ?? null;
  }
  /** The final response, or else the latest step's output messages. */
  currentResponse(): readonly Message[] {
    const step = this.currentStep() ?? this.lastStep();
    return step?.outputMessages() ?? [];
  }
  /** Messages steered into the run that have not yet joined the conversation (saved with the state). */
  steeredMessages(): readonly Message[] {
    return this.props.context.store().section(STEERING_SECTION);
  }

  // ---- output --------------------------------------------------------------------------------

  debug() {
    const execution = this.props.execution;
    return {
      status: this.status(),
      executionCount: this.props.executionCount,
      hasExecution: execution !== null,
      executionId: execution?.executionId() ?? null,
      steps: this.stepCount(),
      continuation: execution?.continuation().describe() ?? 'No Stop Signals; Continuation Requested: No',
      hasErrors: this.hasErrors(),
      errors: this.errors(),
      usage: this.usage(),
    };
  }

  /** The serialized form, a flat object; transient fields of the step in flight are left out. */
  toJSON() {
    return encodeAgentState(this.props);
  }

  protected taggedOutput(step: AgentStep): Message[] {
    const tags: Record<string, unknown> = {
      step_id: step.id(),
      execution_id: this.props.execution?.executionId() ?? null,
      agent_id: this.props.agentId,
    };
    if (step.stepType() !== 'final_response') tags.is_trace = true;
    return step.outputMessages().map((m) => Message.withMetadata(m, tags));
  }
}
