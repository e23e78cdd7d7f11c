import { AgentContext, type ResponseFormat, STEERING_SECTION } from './agent-context';
import { AgentError } from './agent-error';
import type { AgentStateProps, LlmConfig } from './agent-state-props';
import { AgentStateView, type InternalProps } from './agent-state-view';
import { AgentStep } from './agent-step';
import { type ApprovalDecision, ApprovalRequest } from './approval';
import { ApprovalError } from './approval-error';
import { InvalidArgumentError, kindOf } from './errors';
import { ExecutionState } from './execution-state';
import { ExecutionStatus, isTerminalStatus } from './execution-status';
import { newId } from './ids';
import { asJsonValue, isRecord } from './json-value';
import { adoptMessage, assertMessages, type ContentPart, decodeMessage, Message } from './message';
import { bindNestedStateDecoder } from './nested-state';
import type { ApprovalRoute } from './pending-approval';
import { type AgentStateJSON, agentStateSchema } from './schemas';
import { decodeAgentStateProps } from './serialization';
import { isAgentStateDocument } from './state-document-check';
import { failsTheRun, StopReason, wasForceStopped } from './stop-reason';
import { StopSignal } from './stop-signal';
import { ToolExecution } from './tool-execution';
import { validate, validateParsedJson } from './validation';

export type { AgentStateProps, LlmConfig } from './agent-state-props';

/**
 * Everything about an agent: its session (identity, conversation, metadata) and its current
 * execution (null between executions). Immutable: every `with*` returns a new state.
 *
 * @example
 * const state = AgentState.empty().withSystemPrompt('You add numbers.').withUserMessage('2 + 3?');
 */
export class AgentState extends AgentStateView {
  private constructor(props: InternalProps) {
    super(props);
  }

  static empty(options: { agentId?: string; parentAgentId?: string | null } = {}): AgentState {
    const now = Date.now();
    return new AgentState({
      agentId: options.agentId ?? newId(),
      parentAgentId: options.parentAgentId ?? null,
      createdAt: now,
      updatedAt: now,
      executionCount: 0,
      llmConfig: null,
      context: AgentContext.empty(),
      execution: null,
      nextExecutionId: newId(),
    });
  }

  /** @internal used by deserialization */
  static restore(props: AgentStateProps): AgentState {
    return new AgentState({ ...props, nextExecutionId: newId() });
  }

  /**
   * Builds a state from its `toJSON()` form (an object, or the JSON text). Raises
   * InvalidStateError naming the first bad field; never returns a partly built state.
   */
  static fromJSON(data: unknown): AgentState {
    const json = validate(agentStateSchema, data, 'AgentState', isAgentStateDocument);
    // From JSON text, the document is this call's own parse: its messages are taken, not copied.
    return AgentState.fromParsed(json, typeof data === 'string');
  }

  /** @internal `fromJSON` of a value `JSON.parse` made (see validateParsedJson) */
  static fromParsedJson(data: unknown): AgentState {
    return AgentState.fromParsed(
      validateParsedJson(agentStateSchema, data, 'AgentState', isAgentStateDocument),
      true,
    );
  }

  /**
   * @internal from a validated document, or the part of one that holds it (a subagent's state);
   * `owned`: no one else holds the document (this library parsed it), so its messages are taken
   */
  static fromParsed(json: AgentStateJSON, owned = false): AgentState {
    return AgentState.restore(decodeAgentStateProps(json, owned ? adoptMessage : decodeMessage));
  }

  // ---- session changes -----------------------------------------------------------------------

  withSystemPrompt(systemPrompt: string): AgentState {
    if (typeof systemPrompt !== 'string')
      throw new InvalidArgumentError('systemPrompt', `expected a string, got ${kindOf(systemPrompt)}`);
    return this.withContext(this.props.context.withSystemPrompt(systemPrompt));
  }
  /** Adds a user message: text, or parts (text, images, files; see `Message.user`). */
  withUserMessage(content: string | readonly ContentPart[]): AgentState {
    return this.withMessages([Message.user(content)]);
  }
  withMessages(messages: readonly Message[], section?: string): AgentState {
    assertMessages(messages);
    return this.withContext(this.props.context.withMessages(messages, section));
  }
  /** Keeps messages steered into the run until the next step starts (`withSteeringApplied`). */
  withSteeredMessages(messages: readonly Message[]): AgentState {
    return this.withMessages(messages, STEERING_SECTION);
  }
  /** The steered messages join the conversation, for the model to see at the step that starts. */
  withSteeringApplied(): AgentState {
    const steered = this.steeredMessages();
    if (steered.length === 0) return this;
    return this.withContext(
      this.props.context.withMessages(steered).withSectionReplaced([], STEERING_SECTION),
    );
  }
  /** Sets a metadata entry, kept as its JSON form (UnsavableValueError, ValueTooDeepError if none). */
  withMetadata(key: string, value: unknown): AgentState {
    // an object given as the key (`withMetadata({ a: 1 })`) would be stored as "[object Object]"
    if (typeof key !== 'string')
      throw new InvalidArgumentError('key', `expected a string, got ${kindOf(key)}`);
    return this.withContext(this.props.context.withMetadata(key, asJsonValue(value, `Metadata '${key}'`)));
  }
  withoutMetadata(key: string): AgentState {
    return this.withContext(this.props.context.withoutMetadata(key));
  }
  withResponseFormat(format: ResponseFormat): AgentState {
    return this.withContext(this.props.context.withResponseFormat(format));
  }
  withLlmConfig(llmConfig: LlmConfig | null): AgentState {
    if (llmConfig === null) return this.with({ llmConfig: null });
    const kept = asJsonValue(llmConfig, 'The llmConfig');
    if (!isRecord(kept))
      throw new InvalidArgumentError('llmConfig', `expected an object or null, got ${kindOf(kept)}`);
    return this.with({ llmConfig: Object.freeze({ ...kept }) });
  }
  withParentAgentId(parentAgentId: string | null): AgentState {
    return this.with({ parentAgentId });
  }
  withContext(context: AgentContext): AgentState {
    return this.with({ context });
  }
  /**
   * The state as saved by the agent of this version (`createAgent({ version })` stamps it on each
   * run); null for none. Its time of change is kept: the version says who saved it, not a change.
   */
  withAgentVersion(version: string | null): AgentState {
    if (version !== null && (typeof version !== 'string' || version === ''))
      throw new InvalidArgumentError(
        'agentVersion',
        `expected a non-empty string or null, got ${kindOf(version)}`,
      );
    if ((this.props.agentVersion ?? null) === version) return this;
    return new AgentState({ ...this.props, agentVersion: version });
  }

  // ---- execution changes ---------------------------------------------------------------------

  /**
   * Begins an execution: a finished one is cleared first (`forNextExecution()`), a new one is
   * counted and set InProgress, with an id drawn now (seed 000), so two executions started from one
   * state are two executions. An execution already in progress (a resumed checkpoint) goes on.
   */
  withExecutionStarted(at = Date.now()): AgentState {
    const base = isTerminalStatus(this.status()) ? this.forNextExecution() : this;
    const existing = base.props.execution;
    if (existing && existing.status() === ExecutionStatus.InProgress && base.props.executionCount > 0) {
      return base;
    }
    return base.with({
      executionCount: base.props.executionCount + 1,
      // an execution a `with*` call made before the start (a signal set ahead) keeps what it holds
      execution: existing ? existing.withExecutionId(newId()) : ExecutionState.fresh(newId(), at),
    });
  }
  withExecutionStatus(status: ExecutionStatus): AgentState {
    return this.withExecution(this.ensureExecution().withStatus(status));
  }
  withStopSignal(signal: StopSignal): AgentState {
    return this.withExecution(this.ensureExecution().withStopSignal(signal));
  }
  withContinuationRequested(requested = true): AgentState {
    return this.withExecution(this.ensureExecution().withContinuationRequested(requested));
  }
  withStepStarted(at = Date.now()): AgentState {
    return this.withExecution(this.ensureExecution().withStepStarted(at));
  }
  /** Sets the step in flight (the driver's result); its output shows in `messages()` at once. */
  withCurrentStep(step: AgentStep): AgentState {
    return this.withExecution(this.ensureExecution().withCurrentStep(step));
  }
  /**
   * The step in flight waits for a person's decision on these tool calls (in the model's order);
   * an approval the step has already (calls a crash interrupted, in a replay) keeps its calls.
   */
  withApprovalRequested(toolCallIds: readonly string[], at = Date.now()): AgentState {
    return this.withExecution(
      this.ensureExecution().withApproval(ApprovalRequest.withRequested(this.approval(), toolCallIds, at)),
    );
  }
  /**
   * The step in flight as a load after a crash finds it when its unsafe calls `toolCallIds` had
   * started: those without a result wait for a person as interrupted (a replay of a recovered run).
   */
  withToolsInterrupted(toolCallIds: readonly string[], at = Date.now()): AgentState {
    const finished = new Set(
      this.currentStep()
        ?.toolExecutions()
        .map((e) => e.toolCallId()),
    );
    const started = ApprovalRequest.withStarted(this.approval(), toolCallIds, at);
    return this.withExecution(
      this.ensureExecution().withApproval(ApprovalRequest.interrupting(started, (id) => finished.has(id))),
    );
  }
  /**
   * The step in flight waits for the children of its subagent calls, which wait for decisions
   * (their states by the call's id); the step's finished calls keep their results.
   */
  withSubagentsAwaiting(children: Readonly<Record<string, AgentState>>, at = Date.now()): AgentState {
    return this.withExecution(this.ensureExecution().withApproval(ApprovalRequest.ofChildren(children, at)));
  }
  /** The signatures of the pending calls (`approvalSecret`), by `approvalKey(callPath, toolCallId)`. */
  withApprovalSignatures(signatures: Readonly<Record<string, string>>): AgentState {
    const approval = this.approval();
    if (!approval) return this;
    return this.withExecution(
      this.ensureExecution().withApproval(ApprovalRequest.withSignatures(approval, signatures)),
    );
  }
  /**
   * Takes a person's decision on a pending tool call, the step's own or one inside a waiting
   * subagent (`{ callPath }`, the pending call's, tells calls with the same id apart; a bare array
   * is the older `path` of subagent names). Raises ApprovalError (APPROVAL_NOT_PENDING) for an id
   * that is not pending or already decided, and changes nothing then.
   */
  withApprovalDecision(
    toolCallId: string,
    decision: ApprovalDecision,
    route?: ApprovalRoute | readonly string[],
  ): AgentState {
    const approval = this.approval();
    const calls = this.currentStep()?.requestedToolCalls() ?? [];
    if (!approval) throw ApprovalError.notPending(toolCallId, []);
    const decided = ApprovalRequest.withDecision(approval, calls, toolCallId, decision, route);
    const execution = this.ensureExecution().withApproval(decided);
    // a decision on the step's own call (not one inside a child) is new in its decisions
    const kept = Object.hasOwn(approval.decisions, toolCallId) ? undefined : decided.decisions[toolCallId];
    const call = calls.find((c) => c.id === toolCallId);
    const step = this.currentStep();
    // a call completed by a person has its result now: the tool executor runs only calls without one
    if (kept?.type !== 'complete' || !call || !step) return this.withExecution(execution);
    const done = ToolExecution.succeeded(call, kept.result, Date.now());
    return this.withExecution(
      execution.withCurrentStep(step.withToolExecutions([...step.toolExecutions(), done])),
    );
  }
  /**
   * The intent of the step in flight, as it is saved before its unsafe calls `toolCallIds` start
   * (any approval it has kept). Loaded after a crash, those calls without a result wait for a person
   * (`pendingApprovals()` with `reason: 'interrupted'`).
   */
  withToolsStarting(toolCallIds: readonly string[], at = Date.now()): AgentState {
    return this.withExecution(
      this.ensureExecution().withApproval(ApprovalRequest.withStarted(this.approval(), toolCallIds, at)),
    );
  }
  /**
   * The intent of the step in flight as its subagent calls save theirs (a subagent has no session
   * of its own): `children`, the child states by the subagent call's id, join its approval beside
   * its own unsafe calls `toolCallIds` about to start. Loaded after a crash, each child resumes
   * from its state there, its started calls waiting as interrupted.
   */
  withSubagentIntents(
    children: Readonly<Record<string, AgentState>>,
    toolCallIds: readonly string[],
    at = Date.now(),
  ): AgentState {
    const approval = ApprovalRequest.withChildIntents(this.approval(), children, toolCallIds, at);
    return this.withExecution(this.ensureExecution().withApproval(approval));
  }
  /**
   * The decisions have been carried out (the approved calls ran): no approval is pending. Each call
   * a crash had interrupted keeps how a person resolved it (`ToolExecution.resolution()`).
   */
  withApprovalCleared(): AgentState {
    const approval = this.approval();
    if (!approval) return this;
    const cleared = this.withExecution(this.ensureExecution().withApproval(null));
    const step = cleared.currentStep();
    const interrupted = new Set(approval.interrupted ?? []);
    if (!step || interrupted.size === 0) return cleared;
    const resolved = step.toolExecutions().map((execution) => {
      const decision = approval.decisions[execution.toolCallId()];
      if (!decision || !interrupted.has(execution.toolCallId())) return execution;
      if ((decision.type === 'approve' || decision.type === 'complete') && decision.reconciled)
        return execution.withResolution('reconciled');
      return execution.withResolution(
        decision.type === 'reject' ? 'rejected' : decision.type === 'complete' ? 'completed' : 'approved',
      );
    });
    return cleared.withCurrentStep(step.withToolExecutions(resolved));
  }
  /**
   * Records the step in flight as a StepExecution and moves its output messages into the store,
   * tagged with step_id, execution_id, agent_id (and is_trace unless it is the final response).
   */
  withCurrentStepRecorded(at = Date.now()): AgentState {
    const execution = this.props.execution;
    const step = execution?.currentStep();
    if (!execution || !step) return this;
    return this.with({
      context: this.props.context.withMessages(this.taggedOutput(step)),
      execution: execution.withCurrentStepRecorded(at),
    });
  }
  /**
   * Records every tool call of the step in flight that has no result yet as failed with `error`
   * (a stop: an AbortError; a crash of the tool executor: its error), so that a step that ends
   * early still accounts for each call it started, exactly once. A subagent call whose child
   * waited for decisions keeps the child's waiting state (a replay answers the child from it); its
   * usage stays uncounted for the call, as the waiting child's was.
   */
  withPendingToolCallsFailed(error: AgentError, at = Date.now()): AgentState {
    const step = this.currentStep();
    if (!step) return this;
    const done = new Set(step.toolExecutions().map((e) => e.toolCallId()));
    const missing = step.requestedToolCalls().filter((call) => !done.has(call.id));
    if (missing.length === 0) return this;
    const waiting = this.approval()?.children ?? {};
    const failed = missing.map((call) => {
      const ended = ToolExecution.failed(call, error, at, at);
      const child = Object.hasOwn(waiting, call.id) ? waiting[call.id] : undefined;
      return child ? ended.withEndedChild(child) : ended;
    });
    return this.withCurrentStep(step.withToolExecutions([...step.toolExecutions(), ...failed]));
  }
  /**
   * Ends the execution unrecoverably: the error is recorded on the step in flight (a new one when
   * `inStep` says the failure was the step's own, a failed model call), otherwise on the execution
   * (a hook before or after the steps failed); a stop signal with `reason` is raised and the status
   * becomes Failed.
   */
  withFailure(
    error: unknown,
    reason: StopReason = StopReason.ErrorForbade,
    source = '',
    options: { inStep?: boolean } = {},
  ): AgentState {
    const record = AgentError.from(error);
    const execution = this.ensureExecution();
    const step = execution.currentStep() ?? (options.inStep ? AgentStep.of() : null);
    const recorded = step ? execution.withCurrentStep(step.withError(record)) : execution.withError(record);
    return this.withExecution(
      recorded
        .withStopSignal(StopSignal.of(reason, record.message, { error: record.name }, source))
        .withStatus(ExecutionStatus.Failed),
    );
  }
  /**
   * Closes the execution with its outcome (seed 000's status table: status follows errors, not the
   * reason's name): Failed after a failure, or when the deciding signal is ErrorForbade or
   * RetryLimitReached and an error was recorded; Stopped for any other force-stopping signal (a
   * hook's RetryLimitReached with no error anywhere included); else Completed. A step still in
   * flight is recorded first.
   */
  withExecutionCompleted(at = Date.now()): AgentState {
    const recorded = this.withCurrentStepRecorded(at);
    return recorded.withExecution(recorded.ensureExecution().withCompleted(recorded.concludingStatus(), at));
  }
  /**
   * The status `withExecutionCompleted` closes the execution with, for a state with no step in
   * flight (the chart decides an outcome with it before closing the execution).
   */
  concludingStatus(): ExecutionStatus {
    const execution = this.ensureExecution();
    const signal = execution.continuation().highestStopSignal();
    const failed =
      execution.status() === ExecutionStatus.Failed ||
      (signal !== null && failsTheRun(signal.reason) && this.errors().length > 0);
    if (failed) return ExecutionStatus.Failed;
    return signal && wasForceStopped(signal.reason) ? ExecutionStatus.Stopped : ExecutionStatus.Completed;
  }
  /** Keeps the session (ids, messages, metadata, executionCount) and clears the execution. */
  forNextExecution(): AgentState {
    return new AgentState({
      ...this.props,
      execution: null,
      nextExecutionId: newId(),
      updatedAt: touch(this.props.updatedAt),
    });
  }

  private ensureExecution(): ExecutionState {
    return this.props.execution ?? ExecutionState.fresh(this.props.nextExecutionId);
  }

  private withExecution(execution: ExecutionState): AgentState {
    return this.with({ execution });
  }

  private with(patch: Partial<InternalProps>): AgentState {
    return new AgentState({ ...this.props, ...patch, updatedAt: touch(this.props.updatedAt) });
  }
}

function touch(previous: number): number {
  return Math.max(Date.now(), previous);
}

// The parts below this file hold subagents' states (a tool call's child, an approval's waiting
// children) without importing this file back: they name the type and decode it through nested-state.ts.
declare module './nested-state' {
  interface NestedStateTypes {
    agentState: AgentState;
  }
}
bindNestedStateDecoder(AgentState.fromParsed);
