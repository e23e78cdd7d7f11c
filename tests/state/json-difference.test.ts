/** Where two documents first differ: the paths `firstDifference` names (the replay's divergences show them). */
import { describe, expect, it } from 'vitest';
import { firstDifference, withFreshDrawsOf } from '../../src/state/json-difference';

describe('firstDifference', () => {
  it('names the path of the first difference, and null when equal but for fresh ids and clocks', () => {
    expect(firstDifference({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] })).toBeNull();
    expect(firstDifference({ a: [1, { b: 2 }] }, { a: [1, { b: 3 }] })).toEqual({
      path: 'a[1].b',
      recorded: 2,
      replayed: 3,
    });
    expect(firstDifference({ a: [1, 2] }, { a: [1] })).toEqual({
      path: 'a.length',
      recorded: 2,
      replayed: 1,
    });
    expect(firstDifference([1, 2], [1])).toEqual({ path: 'length', recorded: 2, replayed: 1 });
    expect(firstDifference([{ x: 1 }], [{ x: 2 }])).toEqual({ path: '[0].x', recorded: 1, replayed: 2 });
    expect(firstDifference(1, 2)).toEqual({ path: '(root)', recorded: 1, replayed: 2 });
    expect(firstDifference({ 'a b': 1 }, { 'a b': 2 })).toEqual({
      path: '["a b"]',
      recorded: 1,
      replayed: 2,
    });
    expect(firstDifference({ x: { 'a-b': [0] } }, { x: { 'a-b': [1] } })?.path).toBe('x["a-b"][0]');
    expect(firstDifference({ a: {} }, { a: [] })?.path).toBe('a');
    expect(firstDifference({ a: NaN }, { a: NaN })).toBeNull();
    // fresh fields are skipped, but not inside data
    expect(firstDifference({ createdAt: 1, agentId: 'x' }, { createdAt: 2, agentId: 'y' })).toBeNull();
    expect(firstDifference({ value: { createdAt: 1 } }, { value: { createdAt: 2 } })?.path).toBe(
      'value.createdAt',
    );
    expect(
      firstDifference({ toolCall: { id: 'c' }, id: 'e1' }, { toolCall: { id: 'c' }, id: 'e2' }),
    ).toBeNull();
    expect(
      firstDifference({ metadata: { execution_id: 'a', k: 1 } }, { metadata: { execution_id: 'b', k: 2 } }),
    ).toEqual({
      path: 'metadata.k',
      recorded: 1,
      replayed: 2,
    });
    expect(firstDifference({ metadata: 1 }, { metadata: 2 })?.path).toBe('metadata');
  });

  it('puts the path under the one given', () => {
    expect(firstDifference({ total: 5 }, { total: 6 }, 'toolExecutions[0].value')?.path).toBe(
      'toolExecutions[0].value.total',
    );
    expect(firstDifference([1], [1, 2], 'inputMessages')?.path).toBe('inputMessages.length');
    expect(firstDifference(1, 2, 'usage')?.path).toBe('usage');
    expect(firstDifference([1], [2], 'toolExecutions')?.path).toBe('toolExecutions[0]');
  });
});

describe('withFreshDrawsOf', () => {
  const recorded = {
    agentId: 'a1',
    createdAt: 'T1',
    execution: { executionId: 'e1', startedAt: 'T2', completedAt: 'T3' },
    toolExecutions: [
      {
        id: 'x1',
        toolCall: { id: 'c1', args: { startedAt: 'user' } },
        value: { agentId: 'mine' },
        startedAt: 'T4',
      },
    ],
    messages: [{ content: 'hi', metadata: { execution_id: 'e1', agent_id: 'a1', note: 'kept' } }],
  };
  const replayed = {
    agentId: 'a2',
    createdAt: 'U1',
    execution: { executionId: 'e2', startedAt: 'U2', completedAt: null },
    toolExecutions: [
      {
        id: 'x2',
        toolCall: { id: 'c1', args: { startedAt: 'other' } },
        value: { agentId: 'theirs' },
        startedAt: 'U4',
      },
      { id: 'x3', toolCall: { id: 'c2', args: {} }, value: 1, startedAt: 'U5' },
    ],
    messages: [{ content: 'hi!', metadata: { execution_id: 'e2', agent_id: 'a2', note: 'new' } }],
  };

  it('takes the recorded ids and clock readings where both have them, and nothing else', () => {
    expect(withFreshDrawsOf(recorded, replayed)).toEqual({
      agentId: 'a1',
      createdAt: 'T1',
      // a reading the replay has not taken stays missing
      execution: { executionId: 'e1', startedAt: 'T2', completedAt: null },
      toolExecutions: [
        // user data (args, value) is never touched, even under a fresh-looking key
        {
          id: 'x1',
          toolCall: { id: 'c1', args: { startedAt: 'other' } },
          value: { agentId: 'theirs' },
          startedAt: 'T4',
        },
        // a record the recording has not is the replay's own
        { id: 'x3', toolCall: { id: 'c2', args: {} }, value: 1, startedAt: 'U5' },
      ],
      messages: [{ content: 'hi!', metadata: { execution_id: 'e1', agent_id: 'a1', note: 'new' } }],
    });
  });

  it('leaves every difference firstDifference reports: equal after it exactly when firstDifference is null', () => {
    const stamped = withFreshDrawsOf(recorded, replayed);
    expect(firstDifference(recorded, stamped)).toEqual(firstDifference(recorded, replayed));
    const same = { ...replayed, execution: { ...replayed.execution, completedAt: 'U3' } };
    const equal = { ...same, toolExecutions: replayed.toolExecutions.slice(0, 1) };
    const recordedLike = {
      ...equal,
      toolExecutions: [
        {
          ...recorded.toolExecutions[0],
          toolCall: equal.toolExecutions[0]?.toolCall,
          value: equal.toolExecutions[0]?.value,
        },
      ],
      messages: [{ content: 'hi!', metadata: { execution_id: 'e1', agent_id: 'a1', note: 'new' } }],
      agentId: 'a1',
      createdAt: 'T1',
      execution: { executionId: 'e1', startedAt: 'T2', completedAt: 'T3' },
    };
    expect(firstDifference(recordedLike, equal)).toBeNull();
    expect(JSON.stringify(withFreshDrawsOf(recordedLike, equal))).toBe(JSON.stringify(recordedLike));
  });
});
