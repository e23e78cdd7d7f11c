/** Where two documents first differ: the paths `firstDifference` names (the replay's divergences show them). */
import { describe, expect, it } from 'vitest';
import { firstDifference } from '../../src/state/json-difference';

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
