import { describe, expect, it } from 'vitest';
import { AppendOnlyList, type SharedFold } from '../../src/state/append-only-list';

/** A fold that counts its calls: the sum of the items, as an immutable list of running sums. */
function summing() {
  const memo = new WeakMap<object, SharedFold<string, readonly number[]>>();
  let calls = 0;
  const fold = (list: AppendOnlyList<number>, key = 'sum') =>
    list.foldShared(
      memo,
      key,
      () => [] as readonly number[],
      (sums, n) => {
        calls++;
        return [...sums, (sums.at(-1) ?? 0) + n];
      },
    );
  return { fold, calls: () => calls };
}

describe('AppendOnlyList.foldShared', () => {
  it('folds only the items a list adds to one already folded', () => {
    const { fold, calls } = summing();
    const a = AppendOnlyList.of([1, 2, 3]);
    expect(fold(a)).toEqual([1, 3, 6]);
    expect(calls()).toBe(3);
    const b = a.append(4, 5);
    expect(fold(b)).toEqual([1, 3, 6, 10, 15]);
    expect(calls()).toBe(5);
    expect(fold(b)).toEqual([1, 3, 6, 10, 15]);
    expect(calls()).toBe(5);
  });

  it('keeps every result valid: folding a longer list does not change an earlier value', () => {
    const { fold } = summing();
    const a = AppendOnlyList.of([1, 2]);
    const first = fold(a);
    fold(a.append(3));
    expect(first).toEqual([1, 3]);
  });

  it('starts over for a branch, an older prefix or another key, and is right each time', () => {
    const { fold, calls } = summing();
    const base = AppendOnlyList.of([1, 2]);
    const left = base.append(10);
    expect(fold(left)).toEqual([1, 3, 13]);
    // appending to `base` again copies its prefix: a new buffer, a fold of its own
    const right = base.append(20);
    expect(fold(right)).toEqual([1, 3, 23]);
    expect(fold(left)).toEqual([1, 3, 13]);
    // a shorter list than the one folded last starts over
    expect(fold(base)).toEqual([1, 3]);
    const before = calls();
    expect(fold(base, 'other key')).toEqual([1, 3]);
    expect(calls()).toBe(before + 2);
  });
});
