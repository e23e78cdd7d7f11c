import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AgentError } from '../../src/state/agent-error';
import { AgentState } from '../../src/state/agent-state';
import { AgentStep, InferenceResponse } from '../../src/state/agent-step';
import { AgentStepType } from '../../src/state/agent-step-type';
import { ExecutionStatus } from '../../src/state/execution-status';
import { Message } from '../../src/state/message';
import { StopReason } from '../../src/state/stop-reason';
import { StopSignal } from '../../src/state/stop-signal';
import { ToolExecution } from '../../src/state/tool-execution';
import { Usage } from '../../src/state/usage';

const call = { id: 'call-1', name: 'add', args: { a: 2, b: 3 } };

function toolStep(usage = Usage.of({ inputTokens: 10, outputTokens: 5 })) {
  return AgentStep.of({
    outputMessages: [Message.assistant('', [call]), Message.toolResult(call, '5')],
    inferenceResponse: InferenceResponse.of({ toolCalls: [call], finishReason: 'tool-calls', usage }),
    toolExecutions: [ToolExecution.succeeded(call, 5, Date.now())],
  });
}
function finalStep(text = 'The answer is 5', usage = Usage.of({ inputTokens: 20, outputTokens: 7 })) {
  return AgentStep.of({
    outputMessages: [Message.assistant(text)],
    inferenceResponse: InferenceResponse.of({ text, finishReason: 'stop', usage }),
  });
}
function runStep(state: AgentState, step: AgentStep) {
  return state.withStepStarted().withCurrentStep(step).withCurrentStepRecorded();
}

describe('AgentState', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: new Date('2026-01-01T00:00:00Z') });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('starts empty: pending, no execution, fresh ids', () => {
    const state = AgentState.empty();
    expect(state.status()).toBe(ExecutionStatus.Pending);
    expect(state.execution()).toBeNull();
    expect(state.agentId()).toMatch(/^[0-9a-f-]{36}$/);
    expect(state.parentAgentId()).toBeNull();
    expect(state.executionCount()).toBe(0);
    expect(state.stepCount()).toBe(0);
    expect(state.steps()).toEqual([]);
    expect(state.lastStep()).toBeNull();
    expect(state.lastStepType()).toBeNull();
    expect(state.stopReason()).toBeNull();
    expect(state.usage()).toEqual(Usage.zero);
    expect(state.hasErrors()).toBe(false);
    expect(state.hasFinalResponse()).toBe(false);
    expect(state.finalResponse()).toBe('');
    expect(state.executionDuration()).toBeNull();
    expect(state.shouldStop()).toBe(true);
  });

  it('keeps every change in a new instance and leaves the original untouched', () => {
    const a = AgentState.empty();
    const b = a
      .withSystemPrompt('You add numbers.')
      .withUserMessage('What is 2 + 3?')
      .withMetadata('user_id', 42);
    expect(a.messages()).toEqual([]);
    expect(a.systemPrompt()).toBe('');
    expect(b.systemPrompt()).toBe('You add numbers.');
    expect(b.context().systemPrompt()).toBe('You add numbers.');
    expect(b.messages().map((m) => [m.role, m.content])).toEqual([['user', 'What is 2 + 3?']]);
    expect(b.metadata()).toEqual({ user_id: 42 });
    expect(b.agentId()).toBe(a.agentId());
    expect(Object.isFrozen(b.messages())).toBe(true);
  });

  it('moves updatedAt on every change and keeps createdAt', () => {
    const a = AgentState.empty();
    vi.advanceTimersByTime(1000);
    const b = a.withUserMessage('hi');
    expect(b.createdAt()).toEqual(a.createdAt());
    expect(b.updatedAt().getTime()).toBe(a.updatedAt().getTime() + 1000);
    vi.advanceTimersByTime(5);
    expect(b.withMetadata('k', 1).updatedAt().getTime()).toBe(b.updatedAt().getTime() + 5);
  });

  it('counts an execution and sets it InProgress when it starts', () => {
    const state = AgentState.empty().withUserMessage('hi').withExecutionStarted();
    expect(state.status()).toBe(ExecutionStatus.InProgress);
    expect(state.executionCount()).toBe(1);
    expect(state.executionId()).toMatch(/^[0-9a-f-]{36}$/);
    expect(state.hasActiveExecution()).toBe(true);
  });

  it('resumes an execution in progress without counting it again', () => {
    const started = runStep(AgentState.empty().withExecutionStarted(), toolStep());
    const resumed = started.withExecutionStarted();
    expect(resumed.executionCount()).toBe(1);
    expect(resumed.executionId()).toBe(started.executionId());
    expect(resumed.stepCount()).toBe(1);
  });

  it('records steps: count, last step, step types, usage accumulated', () => {
    let state = AgentState.empty().withUserMessage('2 + 3?').withExecutionStarted();
    state = runStep(state, toolStep());
    expect(state.stepCount()).toBe(1);
    expect(state.lastStepType()).toBe(AgentStepType.ToolExecution);
    expect(state.hasFinalResponse()).toBe(false);
    state = runStep(state, finalStep());
    expect(state.stepCount()).toBe(2);
    expect(state.steps().map((s) => s.stepType())).toEqual(['tool_execution', 'final_response']);
    expect(state.lastStep()?.outputText()).toBe('The answer is 5');
    expect(state.usage()).toEqual({ inputTokens: 30, outputTokens: 12, totalTokens: 42, cost: 0 });
    expect(state.stepExecutions()[0]?.usage().totalTokens).toBe(15);
    expect(state.hasFinalResponse()).toBe(true);
    expect(state.finalResponse()).toBe('The answer is 5');
    expect(state.currentResponse().map((m) => m.content)).toEqual(['The answer is 5']);
    expect(state.lastToolExecution()?.value()).toBe(5);
    expect(state.toolExecutions()).toHaveLength(1);
  });

  it('counts usage of the step in flight before it is recorded', () => {
    const state = AgentState.empty().withExecutionStarted().withStepStarted().withCurrentStep(finalStep());
    expect(state.stepCount()).toBe(0);
    expect(state.usage().totalTokens).toBe(27);
    expect(state.finalResponse()).toBe('The answer is 5');
  });

  it('derives the step type: Error > ToolExecution > FinalResponse', () => {
    expect(finalStep().stepType()).toBe(AgentStepType.FinalResponse);
    expect(toolStep().stepType()).toBe(AgentStepType.ToolExecution);
    const failedTool = toolStep().withToolExecutions([
      ToolExecution.failed(call, new Error('boom'), Date.now()),
    ]);
    expect(failedTool.stepType()).toBe(AgentStepType.Error);
    expect(failedTool.errors().map((e) => e.message)).toEqual(['boom']);
    expect(finalStep().withError(AgentError.of('X', 'bad')).stepType()).toBe(AgentStepType.Error);
    expect(AgentStep.of().stepType()).toBe(AgentStepType.FinalResponse);
  });

  it('tells requested from executed tool calls (a blocked call is requested, not executed)', () => {
    const other = { id: 'call-2', name: 'rm', args: {} };
    const step = AgentStep.of({
      inferenceResponse: InferenceResponse.of({ toolCalls: [call, other] }),
      toolExecutions: [ToolExecution.succeeded(call, 5, 0), ToolExecution.blocked(other, 'not allowed')],
    });
    expect(step.requestedToolCalls().map((c) => c.id)).toEqual(['call-1', 'call-2']);
    expect(step.executedToolCalls().map((c) => c.id)).toEqual(['call-1']);
    const blocked = step.toolExecutions()[1];
    expect(blocked?.wasBlocked()).toBe(true);
    expect(blocked?.error()?.name).toBe('ToolExecutionBlocked');
    expect(step.stepType()).toBe(AgentStepType.Error);
  });

  it('tags output messages with step_id, execution_id, agent_id, and is_trace on non-final steps', () => {
    let state = AgentState.empty().withUserMessage('2 + 3?').withExecutionStarted();
    const tool = toolStep();
    const final = finalStep();
    state = runStep(runStep(state, tool), final);
    const [user, assistantCall, toolResult, answer] = state.messages();
    expect(user?.metadata).toEqual({});
    for (const m of [assistantCall, toolResult]) {
      expect(m?.metadata).toEqual({
        step_id: tool.id(),
        execution_id: state.executionId(),
        agent_id: state.agentId(),
        is_trace: true,
      });
    }
    expect(answer?.metadata).toEqual({
      step_id: final.id(),
      execution_id: state.executionId(),
      agent_id: state.agentId(),
    });
  });

  it('shows the output of the step in flight in messages() before it joins the store', () => {
    const state = AgentState.empty()
      .withUserMessage('q')
      .withExecutionStarted()
      .withStepStarted()
      .withCurrentStep(finalStep());
    expect(state.messages().map((m) => m.content)).toEqual(['q', 'The answer is 5']);
    expect(state.store().count()).toBe(1);
  });

  describe('shouldStop()', () => {
    const running = () => AgentState.empty().withExecutionStarted().withStepStarted();
    it('stops on a stop signal without a continuation request', () => {
      const state = running()
        .withCurrentStep(toolStep())
        .withStopSignal(StopSignal.of(StopReason.StepsLimitReached));
      expect(state.shouldStop()).toBe(true);
    });
    it('goes on when continuation is requested, even over a stop signal', () => {
      const state = running()
        .withCurrentStep(finalStep())
        .withStopSignal(StopSignal.of(StopReason.StepsLimitReached))
        .withContinuationRequested();
      expect(state.shouldStop()).toBe(false);
    });
    it('goes on while tool calls are pending', () => {
      expect(running().withCurrentStep(toolStep()).shouldStop()).toBe(false);
    });
    it('stops after a final response', () => {
      expect(running().withCurrentStep(finalStep()).shouldStop()).toBe(true);
    });
    it('keeps stop signals across steps and ends a continuation request with its step', () => {
      const state = running()
        .withCurrentStep(toolStep())
        .withStopSignal(StopSignal.of(StopReason.TokenLimitReached))
        .withContinuationRequested()
        .withCurrentStepRecorded();
      expect(state.execution()?.continuation().isContinuationRequested()).toBe(false);
      expect(state.execution()?.continuation().stopSignals).toHaveLength(1);
      // the request covered the step just recorded; the next step stops at its checkpoint
      expect(state.shouldStop()).toBe(false);
      expect(state.withStepStarted().execution()?.continuation().shouldStop()).toBe(true);
    });
  });

  it('reports the stop signal of highest priority; on a tie the earliest', () => {
    const state = AgentState.empty()
      .withStopSignal(StopSignal.of(StopReason.UserRequested, 'user'))
      .withStopSignal(StopSignal.of(StopReason.StepsLimitReached, 'first'))
      .withStopSignal(StopSignal.of(StopReason.StepsLimitReached, 'second'))
      .withStopSignal(StopSignal.of(StopReason.Completed));
    expect(state.stopReason()).toBe(StopReason.StepsLimitReached);
    expect(state.stopSignal()?.message).toBe('first');
  });

  it('records a failure outside any step on the execution, without adding a step', () => {
    const state = runStep(AgentState.empty().withExecutionStarted(), finalStep())
      .withFailure(new Error('afterExecution hook broke'))
      .withExecutionCompleted();
    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.stepCount()).toBe(1);
    expect(
      state
        .execution()
        ?.errors()
        .map((e) => e.message),
    ).toEqual(['afterExecution hook broke']);
    expect(state.errors().map((e) => e.message)).toEqual(['afterExecution hook broke']);
    expect(AgentState.fromJSON(JSON.parse(JSON.stringify(state))).errors()).toEqual(state.errors());
  });

  describe('withExecutionCompleted()', () => {
    const base = () => runStep(AgentState.empty().withExecutionStarted(), finalStep());
    it('is Completed on a natural end, with stop reason Completed', () => {
      const state = base().withExecutionCompleted();
      expect(state.status()).toBe(ExecutionStatus.Completed);
      expect(state.stopReason()).toBe(StopReason.Completed);
      expect(state.execution()?.completedAt()).toEqual(new Date('2026-01-01T00:00:00Z'));
    });
    it('is Stopped when a force-stopping signal was raised', () => {
      const state = base()
        .withStopSignal(StopSignal.of(StopReason.StepsLimitReached))
        .withExecutionCompleted();
      expect(state.status()).toBe(ExecutionStatus.Stopped);
    });
    it('is Completed for FinishReasonReceived, a natural end', () => {
      const state = base()
        .withStopSignal(StopSignal.of(StopReason.FinishReasonReceived))
        .withExecutionCompleted();
      expect(state.status()).toBe(ExecutionStatus.Completed);
      expect(state.stopReason()).toBe(StopReason.FinishReasonReceived);
    });
    it('is Failed after withFailure, with the error recorded on a step', () => {
      const state = base()
        .withFailure(new TypeError('model exploded'), undefined, '', { inStep: true })
        .withExecutionCompleted();
      expect(state.status()).toBe(ExecutionStatus.Failed);
      expect(state.stopReason()).toBe(StopReason.ErrorForbade);
      expect(state.stepCount()).toBe(2);
      expect(state.lastStepType()).toBe(AgentStepType.Error);
      expect(state.errors()).toEqual([
        { name: 'TypeError', message: 'model exploded', code: null, details: null },
      ]);
    });
  });

  it('forNextExecution() keeps the session and clears the execution', () => {
    const done = runStep(
      AgentState.empty().withUserMessage('q').withMetadata('k', 'v').withExecutionStarted(),
      finalStep(),
    ).withExecutionCompleted();
    const next = done.forNextExecution();
    expect(next.execution()).toBeNull();
    expect(next.status()).toBe(ExecutionStatus.Pending);
    expect(next.agentId()).toBe(done.agentId());
    expect(next.executionCount()).toBe(1);
    expect(next.metadata()).toEqual({ k: 'v' });
    expect(next.messages()).toEqual(done.messages());
    expect(next.usage()).toEqual(Usage.zero);
    const second = next.withUserMessage('again').withExecutionStarted();
    expect(second.executionCount()).toBe(2);
    expect(second.executionId()).not.toBe(done.executionId());
  });

  it('starting again after a finished execution clears it first', () => {
    const done = runStep(AgentState.empty().withExecutionStarted(), finalStep()).withExecutionCompleted();
    const again = done.withExecutionStarted();
    expect(again.stepCount()).toBe(0);
    expect(again.executionCount()).toBe(2);
    expect(again.status()).toBe(ExecutionStatus.InProgress);
  });

  it('has no ensureExecution gotcha: with* calls on a state without execution share one execution id', () => {
    const empty = AgentState.empty();
    const chained = empty.withStopSignal(StopSignal.userRequested()).withCurrentStep(finalStep());
    const a = empty.withStopSignal(StopSignal.userRequested());
    const b = empty.withCurrentStep(finalStep());
    expect(a.executionId()).not.toBeNull();
    expect(a.executionId()).toBe(b.executionId());
    expect(chained.executionId()).toBe(a.executionId());
    expect(chained.execution()?.continuation().stopSignals).toHaveLength(1);
    expect(empty.execution()).toBeNull();
  });

  it('debug() summarizes the state', () => {
    const state = runStep(AgentState.empty().withExecutionStarted(), finalStep()).withExecutionCompleted();
    expect(state.debug()).toEqual({
      status: ExecutionStatus.Completed,
      executionCount: 1,
      hasExecution: true,
      executionId: state.executionId(),
      steps: 1,
      continuation: 'No Stop Signals; Continuation Requested: No',
      hasErrors: false,
      errors: [],
      usage: { inputTokens: 20, outputTokens: 7, totalTokens: 27, cost: 0 },
    });
    expect(AgentState.empty().debug().continuation).toBe('No Stop Signals; Continuation Requested: No');
    const stopped = state
      .withStopSignal(StopSignal.of(StopReason.TimeLimitReached))
      .withContinuationRequested();
    expect(stopped.debug().continuation).toBe(
      'Stop Signals: time_limit_reached; Continuation Requested: Yes',
    );
  });

  it('executionDuration() measures seconds of the current execution', () => {
    const state = AgentState.empty().withExecutionStarted();
    vi.advanceTimersByTime(2500);
    expect(state.executionDuration()).toBe(2.5);
    const step = state.withStepStarted();
    vi.advanceTimersByTime(500);
    const recorded = step.withCurrentStep(finalStep()).withCurrentStepRecorded();
    expect(recorded.lastStepExecution()?.duration()).toBe(0.5);
    expect(recorded.withExecutionCompleted().executionDuration()).toBe(3);
  });
});
