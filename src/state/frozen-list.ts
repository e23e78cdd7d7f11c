const EMPTY: readonly never[] = Object.freeze([]);

/**
 * A frozen copy of `items`. Every empty list is one shared array: a state holds several per step
 * (no tool calls, no errors, no executions), and each empty array of its own costs about 32 bytes.
 *
 * @example
 * frozenList([]) === frozenList(undefined); // true
 */
export function frozenList<T>(items: readonly T[] | undefined): readonly T[] {
  return items !== undefined && items.length > 0 ? Object.freeze([...items]) : EMPTY;
}
