/** What the XState inspector shows, as trace data: state paths, actor logic names, payloads, errors. */
import { AgentState } from '../state/agent-state';
import { setOwn } from '../state/json-value';

/** The active state paths of a state value: `{ inProgress: { step: 'tools' } }` -> `['inProgress.step.tools']`. */
export function statePaths(value: unknown): string[] {
  if (typeof value === 'string') return [value];
  if (!isObject(value)) return [];
  const out: string[] = [];
  for (const [key, child] of Object.entries(value)) {
    const inner = statePaths(child);
    if (inner.length === 0) out.push(key);
    else for (const path of inner) out.push(`${key}.${path}`);
  }
  return out;
}

/** The name of an actor's logic: its `src` string, or the id of the logic or its config. */
export function srcName(src: unknown): string {
  if (typeof src === 'string') return src;
  if (isObject(src)) {
    if (typeof src.id === 'string') return src.id;
    const config = src.config;
    if (isObject(config) && typeof config.id === 'string') return config.id;
  }
  return 'anonymous';
}

/** The AgentState an agent actor's context holds (`{ state }`), or null for any other actor. */
export function agentStateOf(context: unknown): AgentState | null {
  if (!isObject(context)) return null;
  const state = context.state;
  if (state instanceof AgentState) return state;
  return null;
}

/**
 * What a received event carries besides its type: nothing of XState's own (their payloads are
 * states) but errors, as `{ name, message }`. AgentStates are left out (a step worker's request and
 * answer carry the whole state; the trace keeps states as checkpoints).
 */
export function eventPayload(event: { type: string } & Record<string, unknown>): unknown {
  if (event.type.startsWith('xstate.error.') || WORKER_ERROR.test(event.type))
    return { error: errorInfo(event.error) };
  if (event.type.startsWith('xstate.')) return undefined;
  const rest = Object.entries(event).filter(
    ([key, value]) => key !== 'type' && !(value instanceof AgentState),
  );
  return rest.length ? Object.fromEntries(rest) : undefined;
}

const WORKER_ERROR = /^(driver|toolExecutor)\.error$/;

export function errorInfo(error: unknown): { name: string; message: string } {
  if (error instanceof Error) return { name: error.name, message: error.message };
  if (isObject(error) && typeof error.message === 'string')
    return { name: typeof error.name === 'string' ? error.name : 'Error', message: error.message };
  return { name: 'Error', message: String(error) };
}

export function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/**
 * A plain JSON copy of `value`: `toJSON()` honoured, errors as `{ name, message }`, actor refs as
 * `{ actor: sessionId }`, functions and `undefined` dropped, cycles cut, an own `__proto__` key kept as data.
 */
export function toJsonValue(value: unknown, depth = 0, seen = new Set<object>()): unknown {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value === 'bigint') return value.toString();
  if (typeof value !== 'object') return undefined;
  if (depth > 40) return '[too deep]';
  if (seen.has(value)) return '[circular]';
  if (value instanceof Error) return errorInfo(value);
  const record = value as Record<string, unknown>;
  if (typeof record.sessionId === 'string' && typeof record.send === 'function')
    return { actor: record.sessionId };
  if (typeof record.toJSON === 'function') return toJsonValue(record.toJSON(), depth + 1, seen);
  seen.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => toJsonValue(item, depth + 1, seen) ?? null);
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(record)) {
      const item = toJsonValue(record[key], depth + 1, seen);
      if (item !== undefined) setOwn(out, key, item);
    }
    return out;
  } finally {
    seen.delete(value);
  }
}
