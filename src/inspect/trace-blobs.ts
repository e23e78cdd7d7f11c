/**
 * The blob table of a trace: large values stored once, keyed by their content hash.
 *
 * An AgentState is stored packed: each message (in `context.messages`, and a step's
 * `outputMessages` and inline `inputMessages`) and each step execution is replaced by
 * `{ "$blob": hash }`, and the packed state is a blob itself. Packing is a pure substitution, so
 * unpacking gives back exactly the state's `toJSON()`; states recorded at several points of a run
 * (or several turns of a session) share their messages and steps.
 */
import { canonicalJson, contentHash } from '../state/content-hash';
import { InvalidTraceError } from './trace-schema';

type Json = unknown;
type Ref = { $blob: string };
type JsonRecord = Record<string, Json>;

/** The parts of an AgentState's `toJSON()` that packing looks into. */
export interface PackableState {
  readonly context: { readonly messages: Readonly<Record<string, readonly Json[]>> };
  readonly execution: {
    readonly stepExecutions: ReadonlyArray<{
      readonly step: { readonly outputMessages: readonly Json[]; readonly inputMessages: readonly Json[] };
    }>;
  } | null;
}

/** Collects blobs; equal content is stored once. */
export class BlobTable {
  private readonly blobs = new Map<string, Json>();
  /** Hashes of objects already stored, by identity: messages are shared between states. */
  private readonly known = new WeakMap<object, string>();

  get size(): number {
    return this.blobs.size;
  }

  /** Stores `value` (a JSON value) and returns its hash. */
  put(value: Json): string {
    if (typeof value === 'object' && value !== null) {
      const cached = this.known.get(value);
      if (cached !== undefined) return cached;
    }
    const hash = contentHash(canonicalJson(value));
    if (!this.blobs.has(hash)) this.blobs.set(hash, value);
    if (typeof value === 'object' && value !== null) this.known.set(value, hash);
    return hash;
  }

  /** Stores an AgentState's `toJSON()` packed (see the module comment) and returns its hash. */
  putState(json: PackableState): string {
    const ref = (value: Json): Ref => ({ $blob: this.put(value) });
    const messages: Record<string, Ref[]> = {};
    for (const [section, list] of Object.entries(json.context.messages)) messages[section] = list.map(ref);
    const execution = json.execution && {
      ...json.execution,
      stepExecutions: json.execution.stepExecutions.map((stepExecution) =>
        ref({
          ...stepExecution,
          step: {
            ...stepExecution.step,
            outputMessages: stepExecution.step.outputMessages.map(ref),
            inputMessages: stepExecution.step.inputMessages.map((item) =>
              isRecord(item) && '$ref' in item ? item : ref(item),
            ),
          },
        }),
      ),
    };
    return this.put({ ...json, context: { ...json.context, messages }, execution });
  }

  toJSON(): Record<string, Json> {
    return Object.fromEntries(this.blobs);
  }
}

/**
 * Rebuilds an AgentState's JSON from its packed blob. Raises InvalidTraceError naming the path of
 * a missing blob or a malformed packed state; the result still goes through `AgentState.fromJSON`.
 *
 * @example
 * const json = unpackState(trace.blobs, trace.agents[0].state);
 * const state = AgentState.fromJSON(json);
 */
export function unpackState(blobs: Readonly<Record<string, Json>>, hash: string, path = 'state'): unknown {
  const get = (h: string, at: string): Json => {
    if (!Object.hasOwn(blobs, h))
      throw new InvalidTraceError(at, `refers to blob ${h}, which is not in blobs`);
    return blobs[h];
  };
  const deref = (value: Json, at: string): Json => {
    if (!isRecord(value) || !('$blob' in value)) return value;
    if (typeof value.$blob !== 'string') throw new InvalidTraceError(`${at}.$blob`, 'expected a blob hash');
    return get(value.$blob, `${at}.$blob`);
  };
  const derefList = (value: Json, at: string): Json =>
    Array.isArray(value) ? value.map((item, i) => deref(item, `${at}[${i}]`)) : value;

  const where = `blobs.${hash}`;
  const packed = get(hash, path);
  if (!isRecord(packed)) throw new InvalidTraceError(where, 'a packed AgentState must be an object');
  const out: JsonRecord = { ...packed };

  const context = packed.context;
  if (isRecord(context) && isRecord(context.messages)) {
    const messages: JsonRecord = {};
    for (const [section, list] of Object.entries(context.messages))
      messages[section] = derefList(list, `${where}.context.messages.${section}`);
    out.context = { ...context, messages };
  }

  const execution = packed.execution;
  if (isRecord(execution) && Array.isArray(execution.stepExecutions)) {
    out.execution = {
      ...execution,
      stepExecutions: execution.stepExecutions.map((item, i) => {
        const at = `${where}.execution.stepExecutions[${i}]`;
        const stepExecution = deref(item, at);
        if (!isRecord(stepExecution) || !isRecord(stepExecution.step)) return stepExecution;
        const stepPath =
          isRecord(item) && '$blob' in item ? `blobs.${String(item.$blob)}.step` : `${at}.step`;
        const step = stepExecution.step;
        return {
          ...stepExecution,
          step: {
            ...step,
            outputMessages: derefList(step.outputMessages, `${stepPath}.outputMessages`),
            inputMessages: derefList(step.inputMessages, `${stepPath}.inputMessages`),
          },
        };
      }),
    };
  }
  return out;
}

/** Every blob hash a packed state refers to, with the path of the reference (for validation). */
export function packedStateRefs(packed: Json, where: string): Array<{ hash: string; path: string }> {
  const refs: Array<{ hash: string; path: string }> = [];
  const collect = (value: Json, at: string) => {
    if (isRecord(value) && typeof value.$blob === 'string')
      refs.push({ hash: value.$blob, path: `${at}.$blob` });
  };
  if (!isRecord(packed)) return refs;
  const context = packed.context;
  if (isRecord(context) && isRecord(context.messages)) {
    for (const [section, list] of Object.entries(context.messages)) {
      if (!Array.isArray(list)) continue;
      for (let i = 0; i < list.length; i++) collect(list[i], `${where}.context.messages.${section}[${i}]`);
    }
  }
  const execution = packed.execution;
  if (isRecord(execution) && Array.isArray(execution.stepExecutions)) {
    const steps = execution.stepExecutions;
    for (let i = 0; i < steps.length; i++) collect(steps[i], `${where}.execution.stepExecutions[${i}]`);
  }
  return refs;
}

/** Every message blob a packed step execution refers to. */
export function packedStepRefs(packed: Json, where: string): Array<{ hash: string; path: string }> {
  const refs: Array<{ hash: string; path: string }> = [];
  if (!isRecord(packed) || !isRecord(packed.step)) return refs;
  for (const field of ['outputMessages', 'inputMessages'] as const) {
    const list = packed.step[field];
    if (!Array.isArray(list)) continue;
    list.forEach((m, i) => {
      if (isRecord(m) && typeof m.$blob === 'string')
        refs.push({ hash: m.$blob, path: `${where}.step.${field}[${i}].$blob` });
    });
  }
  return refs;
}

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
