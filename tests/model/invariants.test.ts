import { describe, expect, it } from 'vitest';
import { AgentState } from '../../src/state/agent-state';
import { AgentStep, InferenceResponse } from '../../src/state/agent-step';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { StopReason } from '../../src/state/stop-reason';
import { StopSignal } from '../../src/state/stop-signal';
import { ToolExecution } from '../../src/state/tool-execution';
import { Usage } from '../../src/state/usage';
import { invariantViolations } from '../../src/testing/invariants';

const budget = new ExecutionBudget({ maxSteps: 1, maxTokens: 10 });
const call = { id: 'c1', name: 'add', args: {} };
const toolStep = (executions: ToolExecution[] = []) =>
  AgentStep.of({
    inferenceResponse: InferenceResponse.of({ toolCalls: [call], usage: Usage.of({ inputTokens: 5 }) }),
    toolExecutions: executions,
  });
const record = (state: AgentState, step: AgentStep) =>
  state.withStepStarted().withCurrentStep(step).withCurrentStepRecorded();

describe('invariantViolations', () => {
  const running = AgentState.empty().withExecutionStarted();

  it('accepts a consistent state', () => {
    expect(
      invariantViolations({
        snapshot: { value: { inProgress: 'step' } },
        state: running,
        budget,
        events: [],
      }),
    ).toEqual([]);
  });

  it('reports a status that does not match the machine state', () => {
    expect(
      invariantViolations({ snapshot: { value: 'completed' }, state: running, budget, events: [] }),
    ).toContain('status is in_progress in state completed');
  });

  it('reports more steps than maxSteps, and usage beyond maxTokens plus the last step', () => {
    let state = running;
    for (let i = 0; i < 4; i++) state = record(state, toolStep()); // 5 tokens each
    const broken = invariantViolations({
      snapshot: { value: { inProgress: 'step' } },
      state,
      budget,
      events: [],
    });
    expect(broken).toContain('4 steps recorded, more than maxSteps 1');
    expect(broken).toContain('usage 20 tokens exceeds maxTokens 10 by more than the last step');
  });

  it('reports a tool call recorded twice, and one started but never recorded', () => {
    const twice = record(
      running,
      toolStep([ToolExecution.succeeded(call, 1, 0), ToolExecution.succeeded(call, 2, 0)]),
    );
    expect(
      invariantViolations({
        snapshot: { value: { inProgress: 'step' } },
        state: twice,
        budget: ExecutionBudget.unlimited(),
        events: [],
      }),
    ).toContain('tool call c1 recorded 2 times');
    const ended = running.withExecutionCompleted();
    const started = {
      type: 'tool.started' as const,
      agentId: '',
      parentAgentId: null,
      executionId: ended.executionId() ?? '',
      stepNumber: 1,
      toolCallId: 'c9',
      toolName: 'add',
      args: {},
    };
    expect(
      invariantViolations({ snapshot: { value: 'completed' }, state: ended, budget, events: [started] }),
    ).toContain('tool call c9 started but never recorded');
  });

  it('reports a lost step and a stop reason that is not the highest-priority signal', () => {
    const one = record(running, toolStep([ToolExecution.succeeded(call, 1, 0)]));
    const other = record(running, toolStep([ToolExecution.succeeded(call, 1, 0)]));
    expect(
      invariantViolations({
        snapshot: { value: { inProgress: 'step' } },
        state: other,
        previous: one,
        budget: ExecutionBudget.unlimited(),
        events: [],
      }),
    ).toContain('a completed step was lost or replaced');
    const stopped = running.withStopSignal(StopSignal.of(StopReason.UserRequested)).withExecutionCompleted();
    const lying = Object.create(stopped, { stopReason: { value: () => StopReason.Completed } }) as AgentState;
    expect(
      invariantViolations({ snapshot: { value: 'stopped' }, state: lying, budget, events: [] }),
    ).toContain('stop reason is completed, the highest-priority signal says user_requested');
  });
});
