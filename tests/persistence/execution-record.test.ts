import { describe, expect, it } from 'vitest';
import { ExecutionNotFinishedError, ExecutionRecord, stateFromRecord } from '../../src/persistence/index';
import { AgentState } from '../../src/state/agent-state';
import { InvalidStateError } from '../../src/state/errors';
import { finishedState, inProgressState } from './fixtures';

describe('ExecutionRecord', () => {
  it('round-trips through toJSON / fromJSON (and JSON text)', async () => {
    const record = ExecutionRecord.fromState(await finishedState());
    const json = JSON.parse(JSON.stringify(record));
    expect(Object.keys(json)).toEqual([
      'executionId',
      'agentId',
      'parentAgentId',
      'startedAt',
      'completedAt',
      'status',
      'stopReason',
      'usage',
      'stepCount',
      'finalState',
    ]);
    const again = ExecutionRecord.fromJSON(json);
    expect(again.toJSON()).toEqual(record.toJSON());
    expect(again.durationSeconds).toBe(record.durationSeconds);
    expect(Object.isFrozen(again)).toBe(true);
  });

  it('keeps the parent agent of a subagent', () => {
    const state = AgentState.empty({ parentAgentId: 'parent-1' })
      .withUserMessage('q')
      .withExecutionStarted(1_000)
      .withExecutionCompleted(3_500);
    const record = ExecutionRecord.fromState(state);
    expect(record.parentAgentId).toBe('parent-1');
    expect(record.durationSeconds).toBe(2.5);
    expect(record.startedAt.toISOString()).toBe('1970-01-01T00:00:01.000Z');
  });

  it('hands out copies of its dates', async () => {
    const record = ExecutionRecord.fromState(await finishedState());
    const completedAt = record.completedAt;
    completedAt.setTime(0);
    expect(record.completedAt.getTime()).not.toBe(0);
  });

  it('refuses a state whose execution has not finished', () => {
    expect(() => ExecutionRecord.fromState(inProgressState(1))).toThrow(ExecutionNotFinishedError);
    expect(() => ExecutionRecord.fromState(AgentState.empty())).toThrow(ExecutionNotFinishedError);
  });

  it('fromJSON names the bad field, inside the final state too', async () => {
    const json = JSON.parse(JSON.stringify(ExecutionRecord.fromState(await finishedState())));
    const attempts: [Record<string, unknown>, string][] = [
      [{ ...json, status: 'in_progress' }, 'status'],
      [{ ...json, executionId: 'someone-else' }, 'executionId'],
      [{ ...json, usage: { ...json.usage, totalTokens: 1e9 } }, 'usage'],
      [{ ...json, extra: true }, ''],
      [{ ...json, finalState: { ...json.finalState, agentId: 7 } }, 'finalState.agentId'],
      [{ ...json, finalState: { ...json.finalState, execution: null } }, 'finalState.execution'],
    ];
    for (const [data, path] of attempts) {
      const error = (() => {
        try {
          ExecutionRecord.fromJSON(data);
        } catch (e) {
          return e;
        }
      })() as InvalidStateError;
      expect(error).toBeInstanceOf(InvalidStateError);
      expect(error.path).toBe(path);
      expect(error.message).toContain('Invalid ExecutionRecord');
    }
  });

  it('accepts times written with another offset', async () => {
    const record = ExecutionRecord.fromState(await finishedState());
    const json = JSON.parse(JSON.stringify(record));
    const shifted = new Date(record.completedAt.getTime() + 2 * 3600_000)
      .toISOString()
      .replace('Z', '+02:00');
    expect(ExecutionRecord.fromJSON({ ...json, completedAt: shifted }).completedAt).toEqual(
      record.completedAt,
    );
  });

  it('stateFromRecord gives the final state cleared for the next execution', async () => {
    const state = await finishedState();
    const next = stateFromRecord(ExecutionRecord.fromState(state));
    expect(next.execution()).toBeNull();
    expect(next.messages()).toEqual(state.messages());
    expect(next.metadata()).toEqual(state.metadata());
    expect(next.executionCount()).toBe(state.executionCount());
  });
});
