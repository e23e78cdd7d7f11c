import { AgentMachineError } from './errors';

/**
 * The deepest nesting (arrays and objects inside each other) a value entering the state may have:
 * a tool's result, a tool call's arguments, an approval's edited input, structured output, error
 * details. JSON text this deep is still far from what `JSON.stringify` and the loaders can take, so
 * whatever is admitted can be saved and loaded again.
 */
export const MAX_VALUE_DEPTH = 256;

/** A value nested deeper than MAX_VALUE_DEPTH, refused where it entered the state. */
export class ValueTooDeepError extends AgentMachineError {
  static override get name(): string {
    return 'ValueTooDeepError';
  }

  constructor(
    readonly what: string,
    readonly path: string,
    readonly limit = MAX_VALUE_DEPTH,
  ) {
    super(
      'VALUE_TOO_DEEP',
      `${what} is nested more than ${limit} levels deep (at ${path || '(root)'}); ` +
        `values kept in the state are limited to ${limit} levels: return a flatter value`,
    );
  }
}

/** A value that JSON cannot hold (a cycle, a BigInt, a property whose getter throws). */
export class UnsavableValueError extends AgentMachineError {
  static override get name(): string {
    return 'UnsavableValueError';
  }

  constructor(
    readonly what: string,
    readonly path: string,
    readonly detail: string,
  ) {
    super('VALUE_NOT_SAVABLE', `${what} cannot be saved (at ${path || '(root)'}): ${detail}`);
  }
}

type Container = Record<string, unknown> | unknown[];

interface Frame {
  readonly source: Container;
  readonly target: Container;
  readonly keys: readonly string[] | null;
  index: number;
}

/**
 * The JSON value `value` stands for, as a fresh copy that saves and loads unchanged. It follows
 * `JSON.stringify`: `toJSON()` is honoured, `undefined`, functions and symbols are left out of
 * objects (and become `null` in arrays), non-finite numbers become `null`, `-0` becomes `0`. An own
 * `__proto__` key (as `JSON.parse` of third-party JSON makes) stays an own data property; no
 * prototype is touched. Raises ValueTooDeepError past MAX_VALUE_DEPTH and UnsavableValueError for
 * cycles, BigInts and throwing getters. Iterative: no stack frame per nesting level.
 *
 * @example
 * toJsonValue(JSON.parse('{"__proto__":{"admin":true}}')); // own key "__proto__" kept as data
 * toJsonValue({ n: NaN, when: new Date(0) });             // { n: null, when: '1970-01-01T00:00:00.000Z' }
 */
export function toJsonValue(value: unknown, what = 'The value'): unknown {
  const stack: Frame[] = [];
  const onPath = new Set<object>();
  const pathHere = (key?: string | number) => {
    const keys: Array<string | number> = stack.map((f) =>
      f.keys ? (f.keys[f.index - 1] as string) : f.index - 1,
    );
    if (key !== undefined) keys.push(key);
    return formatValuePath(keys);
  };
  /** A primitive's JSON form, `undefined` for what JSON leaves out, or the object to descend into. */
  const convert = (raw: unknown, key: string | number): unknown => {
    let item = raw;
    if (typeof item === 'object' && item !== null) {
      let toJSON: unknown;
      try {
        toJSON = (item as { toJSON?: unknown }).toJSON;
      } catch (error) {
        throw new UnsavableValueError(what, pathHere(), `reading it threw: ${describe(error)}`);
      }
      if (typeof toJSON === 'function') {
        try {
          item = toJSON.call(item, String(key));
        } catch (error) {
          throw new UnsavableValueError(what, pathHere(), `its toJSON() threw: ${describe(error)}`);
        }
      }
    }
    switch (typeof item) {
      case 'string':
      case 'boolean':
        return item;
      case 'number':
        return Number.isFinite(item) ? item + 0 : null;
      case 'bigint':
        throw new UnsavableValueError(what, pathHere(), 'a BigInt has no JSON form; return it as a string');
      case 'object':
        return item;
      default:
        return undefined;
    }
  };
  const open = (source: object): Frame => {
    if (onPath.has(source)) throw new UnsavableValueError(what, pathHere(), 'it refers to itself (a cycle)');
    if (stack.length >= MAX_VALUE_DEPTH) throw new ValueTooDeepError(what, pathHere());
    let keys: string[] | null = null;
    if (!Array.isArray(source)) {
      try {
        keys = Object.keys(source);
      } catch (error) {
        throw new UnsavableValueError(what, pathHere(), `its keys cannot be read: ${describe(error)}`);
      }
    }
    onPath.add(source);
    const frame: Frame = { source: source as Container, target: keys ? {} : [], keys, index: 0 };
    stack.push(frame);
    return frame;
  };

  const root = convert(value, '');
  if (typeof root !== 'object' || root === null) return root === undefined ? null : root;
  const result = open(root).target;
  while (stack.length > 0) {
    const frame = stack[stack.length - 1] as Frame;
    const length = frame.keys ? frame.keys.length : (frame.source as unknown[]).length;
    if (frame.index >= length) {
      stack.pop();
      onPath.delete(frame.source);
      continue;
    }
    const key = frame.keys ? (frame.keys[frame.index] as string) : frame.index;
    frame.index++;
    let raw: unknown;
    try {
      raw = (frame.source as Record<string | number, unknown>)[key];
    } catch (error) {
      throw new UnsavableValueError(what, pathHere(), `reading it threw: ${describe(error)}`);
    }
    let item = convert(raw, key);
    if (typeof item === 'object' && item !== null) item = open(item).target;
    if (frame.keys === null) (frame.target as unknown[]).push(item === undefined ? null : item);
    else if (item !== undefined) setOwn(frame.target as Record<string, unknown>, key as string, item);
  }
  return result;
}

/**
 * `value` itself when it is already plain JSON data within MAX_VALUE_DEPTH (the common case, checked
 * without copying), else `toJsonValue(value, what)`: what enters the state saves and loads unchanged.
 *
 * @example
 * asJsonValue({ a: [1, 'x'] }); // the same object
 * asJsonValue({ n: NaN });      // { n: null }, a copy
 */
export function asJsonValue(value: unknown, what = 'The value'): unknown {
  let plain: boolean;
  try {
    plain = jsonValueProblem(value, MAX_VALUE_DEPTH, 'exact') === null;
  } catch {
    // a getter or a proxy's trap threw: toJsonValue reads it again and names where
    plain = false;
  }
  return plain ? value : toJsonValue(value, what);
}

/** Whether `value` is an object that is not an array (a record, as JSON objects parse). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Sets `key` as an own data property, `__proto__` included (plain assignment would set the prototype). */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__')
    Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
  else target[key] = value;
}

/**
 * Why `value` is not a JSON value as loaded from storage (strings, finite numbers, booleans, null,
 * arrays and plain records, at most `limit` levels deep, no cycles), with the path of the first bad
 * part; null when it is one. `mode` 'shape' checks depth and cycles only (a whole document, whose
 * schema checks the types); 'exact' also refuses `-0`, which JSON writes as `0`. Iterative, so a
 * hostile document cannot exhaust the stack.
 */
export function jsonValueProblem(
  value: unknown,
  limit = MAX_VALUE_DEPTH,
  mode: 'json' | 'shape' | 'exact' = 'json',
): { path: Array<string | number>; detail: string } | null {
  if (typeof value !== 'object' || value === null) {
    const problem = mode === 'shape' ? null : primitiveProblem(value, mode === 'exact');
    return problem ? { path: [], detail: problem } : null;
  }
  const stack: CheckFrame[] = [];
  const onPath = new Set<object>();
  let next: unknown = value;
  for (;;) {
    const problem = mode === 'shape' ? null : primitiveProblem(next, mode === 'exact');
    if (problem) return { path: framePath(stack), detail: problem };
    if (typeof next === 'object' && next !== null) {
      if (onPath.has(next)) return { path: framePath(stack), detail: 'a cycle (the value refers to itself)' };
      if (stack.length >= limit)
        return {
          path: framePath(stack),
          detail: `nested more than ${limit} levels deep (the limit for stored data)`,
        };
      const keys = Array.isArray(next) ? null : Object.keys(next);
      const items = keys ? valuesOf(next as Record<string, unknown>, keys) : (next as unknown[]);
      stack.push({ items, keys, index: 0, source: next });
      onPath.add(next);
    }
    let frame = stack[stack.length - 1];
    while (frame && frame.index >= frame.items.length) {
      stack.pop();
      onPath.delete(frame.source);
      frame = stack[stack.length - 1];
    }
    if (!frame) return null;
    next = frame.items[frame.index++];
  }
}

interface CheckFrame {
  readonly items: readonly unknown[];
  readonly keys: readonly string[] | null;
  index: number;
  readonly source: object;
}

/** The path of the part being checked: the key or index last taken at each level. */
function framePath(stack: readonly CheckFrame[]): Array<string | number> {
  return stack.map((f) => (f.keys ? (f.keys[f.index - 1] as string) : f.index - 1));
}

function valuesOf(record: Record<string, unknown>, keys: readonly string[]): unknown[] {
  const values = new Array<unknown>(keys.length);
  for (let i = 0; i < keys.length; i++) values[i] = record[keys[i] as string];
  return values;
}

function primitiveProblem(value: unknown, exact: boolean): string | null {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return null;
    case 'number':
      if (exact && Object.is(value, -0)) return '-0 is written as 0';
      return Number.isFinite(value) ? null : `${value} is not a JSON number`;
    case 'object': {
      if (value === null || Array.isArray(value)) return null;
      const proto = Object.getPrototypeOf(value);
      return proto === Object.prototype || proto === null
        ? null
        : 'expected plain JSON data, received an object of a class';
    }
    default:
      return `expected a JSON value, received ${typeof value}`;
  }
}

function formatValuePath(keys: ReadonlyArray<string | number>): string {
  let out = '';
  for (const key of keys) out += typeof key === 'number' ? `[${key}]` : out ? `.${key}` : key;
  return out;
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : 'a non-Error value';
}
