/** Where two JSON documents first differ, and the two values found there. */
export interface JsonDifference {
  /** A path into the document: `toolExecutions[0].value.total`. */
  readonly path: string;
  readonly recorded: unknown;
  readonly replayed: unknown;
}

/**
 * Fields a run draws fresh (ids, clocks; with the `id` of tool executions and steps): a replay of
 * the same run differs in them and nothing else. They are skipped wherever the library's own documents have them (states, steps, tool
 * executions, approvals), never inside user data (a tool's value, arguments, metadata of one's own).
 */
const FRESH = new Set([
  'startedAt',
  'completedAt',
  'createdAt',
  'updatedAt',
  'requestedAt',
  'executionId',
  'agentId',
  'parentAgentId',
]);
/** The tags `withCurrentStepRecorded` and the tool executor put in a message's metadata that name fresh ids. */
const FRESH_TAGS = new Set(['execution_id', 'tool_execution_id', 'agent_id', 'step_id']);
/** Keys whose values are data, compared as they are. */
const DATA = new Set([
  'value',
  'args',
  'input',
  'output',
  'structuredOutput',
  'providerMetadata',
  'details',
  'schema',
  'llmConfig',
  'signatures',
]);

/**
 * The first difference between a recorded document (an AgentState's, a step's, a message's JSON)
 * and a replayed one, skipping what a run draws fresh (ids, timestamps); null when they are equal.
 *
 * @example
 * firstDifference({ toolExecutions: [{ value: { total: 5 } }] }, { toolExecutions: [{ value: { total: 6 } }] });
 * // { path: 'toolExecutions[0].value.total', recorded: 5, replayed: 6 }
 */
export function firstDifference(recorded: unknown, replayed: unknown, path = ''): JsonDifference | null {
  const found = walk(recorded, replayed, false);
  if (!found) return null;
  const at = path + found.path;
  return {
    path: (path ? at : at.replace(/^\./, '')) || '(root)',
    recorded: found.recorded,
    replayed: found.replayed,
  };
}

/**
 * The first difference, its path relative to `a` and `b` (`.total`, `[0].value`, `''` at them).
 * The path is written only for the difference found, on the way back: an equal document (most of
 * what a replay compares) writes none.
 */
function walk(a: unknown, b: unknown, data: boolean): JsonDifference | null {
  if (a === b) return null;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) {
    if (typeof a === 'number' && typeof b === 'number' && Number.isNaN(a) && Number.isNaN(b)) return null;
    return { path: '', recorded: a, replayed: b };
  }
  if (Array.isArray(a) !== Array.isArray(b)) return { path: '', recorded: a, replayed: b };
  if (Array.isArray(a)) {
    const other = b as unknown[];
    const shared = Math.min(a.length, other.length);
    for (let i = 0; i < shared; i++) {
      const found = walk(a[i], other[i], data);
      if (found) return within(`[${i}]`, found);
    }
    if (a.length !== other.length) return { path: '.length', recorded: a.length, replayed: other.length };
    return null;
  }
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const freshId = !data && hasFreshId(left);
  const keys = new Set([...Object.keys(left), ...Object.keys(right)]);
  for (const key of keys) {
    if (!data && (FRESH.has(key) || (freshId && key === 'id'))) continue;
    const l = left[key];
    const r = right[key];
    if (l === undefined && r === undefined) continue;
    const found = !data && key === 'metadata' ? walkMetadata(l, r) : walk(l, r, data || DATA.has(key));
    if (found) return within(segment(key), found);
  }
  return null;
}

function walkMetadata(a: unknown, b: unknown): JsonDifference | null {
  if (!isObject(a) || !isObject(b)) return walk(a, b, true);
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    if (FRESH_TAGS.has(key)) continue;
    const found = walk(a[key], b[key], true);
    if (found) return within(segment(key), found);
  }
  return null;
}

/** `found`, its path put under `segment`. */
function within(segment: string, found: JsonDifference): JsonDifference {
  return { path: segment + found.path, recorded: found.recorded, replayed: found.replayed };
}

/**
 * A tool execution's own id and a step's id are drawn fresh (a replay keeps the recorded ones where
 * it answers from the recording; a failed model call's step is the run's own); a tool call's id is
 * the model's.
 */
function hasFreshId(record: Record<string, unknown>): boolean {
  return 'toolCall' in record || 'inferenceResponse' in record;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function segment(key: string): string {
  return /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`;
}

/**
 * `replayed` with the fresh draws of `recorded` (the fields `firstDifference` skips: clock
 * readings, a state's agent and execution ids, a tool execution's id, the messages' id tags) put
 * where both documents have them, of the same kind, at the same place; everything else as
 * replayed. So when `firstDifference(recorded, replayed)` is null the result is JSON-equal to
 * `recorded`; where they differ, the difference stays. Never reaches into user data.
 *
 * @example
 * withFreshDrawsOf({ startedAt: 'T1', value: { at: 'x' } }, { startedAt: 'T2', value: { at: 'y' } });
 * // { startedAt: 'T1', value: { at: 'y' } }
 */
export function withFreshDrawsOf<T>(recorded: unknown, replayed: T): T {
  return stamp(recorded, replayed, false) as T;
}

function stamp(a: unknown, b: unknown, data: boolean): unknown {
  if (data || a === b || typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return b;
  if (Array.isArray(a) !== Array.isArray(b)) return b;
  if (Array.isArray(a))
    return (b as unknown[]).map((item, i) => (i < a.length ? stamp(a[i], item, false) : item));
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const freshId = hasFreshId(left);
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(right)) {
    const fresh = FRESH.has(key) || (freshId && key === 'id');
    if (fresh) out[key] = sameKind(left[key], value) ? left[key] : value;
    else if (key === 'metadata') out[key] = stampTags(left[key], value);
    else out[key] = stamp(left[key], value, DATA.has(key));
  }
  return out;
}

function stampTags(a: unknown, b: unknown): unknown {
  if (!isObject(a) || !isObject(b)) return b;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(b))
    out[key] = FRESH_TAGS.has(key) && sameKind(a[key], value) ? a[key] : value;
  return out;
}

/** Both drawn (a string or a number each, not null: a missing clock reading stays missing). */
function sameKind(a: unknown, b: unknown): boolean {
  return (typeof a === 'string' || typeof a === 'number') && typeof a === typeof b;
}
