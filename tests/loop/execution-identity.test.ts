/**
 * Seed 000: "`executionId` -- A unique `ExecutionId` for correlation. Generated via
 * `ExecutionState::fresh()`", when an execution starts. Two executions started from one state (a
 * retried turn) are two executions, with two ids, in their events and in the execution store.
 */
import { describe, expect, it } from 'vitest';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { InMemoryExecutionStore } from '../../src/persistence/in-memory-execution-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import type { AgentEvent } from '../../src/state/loop-events';

const question = () => AgentState.empty().withUserMessage('What is 2 + 3?');

describe('every execution has an id of its own (seed 000: executionId generated when an execution starts)', () => {
  it('agent.execute(s) twice from the same state: two ids, each in its own events, both recorded', async () => {
    const agent = createAgent({ driver: scriptedDriver([{ text: '5' }, { text: '5' }]) });
    const state = question();
    const firstEvents: AgentEvent[] = [];
    const secondEvents: AgentEvent[] = [];
    const first = await agent.execute(state, { onEvent: (e) => firstEvents.push(e) });
    const second = await agent.execute(state, { onEvent: (e) => secondEvents.push(e) });

    expect(first.executionId()).not.toBeNull();
    expect(second.executionId()).not.toBeNull();
    expect(second.executionId()).not.toBe(first.executionId());
    const ids = (events: AgentEvent[]) =>
      new Set(events.map((e) => (e as { executionId?: string }).executionId).filter((id) => id));
    expect(ids(firstEvents)).toEqual(new Set([first.executionId()]));
    expect(ids(secondEvents)).toEqual(new Set([second.executionId()]));

    const executions = new InMemoryExecutionStore();
    await executions.record(first);
    await expect(executions.record(second)).resolves.toMatchObject({ executionId: second.executionId() });
  });

  it('withExecutionStarted on one state twice starts two executions with two ids', () => {
    const state = question();
    expect(state.withExecutionStarted().executionId()).not.toBe(state.withExecutionStarted().executionId());
  });

  it('a state whose with* calls made an execution before it started still gets a fresh id at each start', async () => {
    const state = question().withContinuationRequested(false);
    const implicit = state.executionId();
    const started = [state.withExecutionStarted(), state.withExecutionStarted()].map((s) => s.executionId());
    expect(new Set([implicit, ...started]).size).toBe(3);
    const agent = createAgent({ driver: scriptedDriver([{ text: '5' }, { text: '5' }]) });
    const [first, second] = [await agent.execute(state), await agent.execute(state)];
    expect(first.executionId()).not.toBe(second.executionId());
  });

  it('unchained with* calls between executions still agree on one id', () => {
    const state = question();
    expect(state.withContinuationRequested().executionId()).toBe(state.withStepStarted().executionId());
  });
});
