import type { InspectionEvent } from 'xstate';
import { AgentState } from '../state/agent-state';
import { setOwn } from '../state/json-value';
import { BlobTable } from './trace-blobs';
import {
  TRACE_FORMAT,
  TRACE_VERSION,
  type Trace,
  type TraceActor,
  type TraceEntry,
  type TraceEntryOf,
} from './trace-schema';

export interface TraceRecorderOptions {
  /** A title for the run, shown by the viewer. */
  readonly title?: string;
  /**
   * Record the machine's state after every transition, eventless ones included (`checkHooks`,
   * `record`, ...), not only after each macrostep. Default true.
   */
  readonly microsteps?: boolean;
  /**
   * When to store an AgentState checkpoint in the trace: at the end of each execution (default),
   * or after every step too. The last state of every agent is always stored. Messages and steps
   * are stored once, but each step checkpoint serializes the whole state and lists all its
   * messages and steps, so `'step'` costs O(steps²): fine for runs of a few hundred steps.
   */
  readonly checkpoints?: 'execution' | 'step';
  /** Event payloads whose JSON is longer than this go to the blob table. Default 1024. */
  readonly inlineLimit?: number;
}

/** What `recorder.attach()` needs of an actor: the agent actor from `agent.createActor()` has it. */
export interface AttachableActor {
  readonly sessionId: string;
  readonly id: string;
  on(type: '*', listener: (event: { type: string }) => void): { unsubscribe(): void };
  getSnapshot(): unknown;
}

export interface TraceRecorder {
  /**
   * The XState inspection observer: pass it as `inspect` to `agent.createActor()` or
   * `agent.execute()`. It sees the actor and every actor it invokes.
   */
  readonly inspect: (event: InspectionEvent) => void;
  /**
   * Records the events the actor emits through `actor.on('*')` (for an actor created without
   * this recorder's `inspect`; with it, emitted events are recorded anyway), and reads the actor's
   * latest AgentState when the trace is taken. Returns a function that detaches.
   */
  attach(actor: AttachableActor): () => void;
  /** Adds an AgentState the recorder did not see run (a state from elsewhere, a subagent's). */
  addState(state: AgentState): void;
  /** The trace so far: a plain JSON-ready object that `readTrace()` accepts. */
  trace(): Trace;
  /** Same as `trace()`, so that `JSON.stringify(recorder)` gives the trace. */
  toJSON(): Trace;
  /** Writes the trace as JSON (Node only; creates the folder). Resolves with the trace written. */
  write(path: string): Promise<Trace>;
}

interface ActorLike {
  readonly sessionId: string;
  readonly id?: string;
  readonly systemId?: string;
  readonly _parent?: ActorLike;
  readonly src?: unknown;
}

type Payload = { payload?: unknown; payloadBlob?: string };
type Checkpoint = 'step.finished' | 'execution.finished';
type MutableActor = { -readonly [K in keyof TraceActor]: TraceActor[K] };

/**
 * Records a run as a trace: the actors created (with parents), the events they received, their
 * snapshots and state paths, the events the library emitted, and AgentState checkpoints, with
 * timestamps. Large values (messages, states, big payloads) are stored once in a blob table
 * keyed by content hash.
 *
 * @example
 * const recorder = recordTrace({ title: 'add numbers' });
 * const done = await agent.execute(state, { inspect: recorder.inspect });
 * await recorder.write('test-output/trace.json');
 * writeFileSync('run.html', renderRunViewer(recorder.trace()));
 *
 * @example
 * // a long-lived session actor
 * const actor = agent.createActor(state, { inspect: recorder.inspect });
 * actor.start();
 * actor.send({ type: 'user.message', text: 'What is 2 + 3?' });
 */
export function recordTrace(options: TraceRecorderOptions = {}): TraceRecorder {
  const microsteps = options.microsteps ?? true;
  const stepCheckpoints = options.checkpoints === 'step';
  const inlineLimit = options.inlineLimit ?? 1024;
  const startedAtMs = Date.now();
  const origin = performance.now();

  const blobs = new BlobTable();
  const actors = new Map<string, MutableActor>();
  const entries: TraceEntry[] = [];
  /** The last state of each agent, by agentId, in the order first seen. */
  const agents = new Map<string, { actor: string | null; state: AgentState }>();
  const attached = new Map<string, AttachableActor>();
  const lastPath = new Map<string, string>();
  const pendingCheckpoint = new Map<string, Checkpoint>();
  let seq = 0;

  const stamp = () => ({ seq: seq++, t: Math.round((performance.now() - origin) * 1000) / 1000 });

  const payloadOf = (value: unknown): Payload => {
    if (value === undefined) return {};
    const json = toJsonValue(value);
    if (json === undefined) return {};
    return JSON.stringify(json).length > inlineLimit ? { payloadBlob: blobs.put(json) } : { payload: json };
  };

  const registerActor = (ref: ActorLike) => {
    if (actors.has(ref.sessionId)) return;
    actors.set(ref.sessionId, {
      ...stamp(),
      actor: ref.sessionId,
      id: ref.id ?? ref.sessionId,
      systemId: ref.systemId ?? null,
      src: srcName(ref.src),
      parent: ref._parent?.sessionId ?? null,
      agentId: null,
    });
  };

  const noteState = (actor: string, state: AgentState) => {
    const record = actors.get(actor);
    if (record && record.agentId === null) record.agentId = state.agentId();
    const known = agents.get(state.agentId());
    if (known) {
      known.actor = actor;
      known.state = state;
    } else agents.set(state.agentId(), { actor, state });
  };

  const pushCheckpoint = (actor: string | null, state: AgentState, reason: Checkpoint | 'added') => {
    const entry: TraceEntryOf<'state'> = {
      ...stamp(),
      kind: 'state',
      actor,
      agentId: state.agentId(),
      parentAgentId: state.parentAgentId(),
      reason,
      state: blobs.putState(state.toJSON()),
    };
    entries.push(entry);
  };

  const recordEmitted = (actor: string | null, event: unknown) => {
    if (!isObject(event) || typeof event.type !== 'string') return;
    const { type, ...rest } = event;
    const agentId = typeof rest.agentId === 'string' ? rest.agentId : null;
    entries.push({
      ...stamp(),
      kind: 'emitted',
      actor,
      type,
      agentId,
      ...payloadOf(Object.keys(rest).length ? rest : undefined),
    });
    if (actor && (type === 'execution.finished' || (stepCheckpoints && type === 'step.finished')))
      pendingCheckpoint.set(actor, type);
  };

  const handle = (event: InspectionEvent) => {
    const ref = event.actorRef as unknown as ActorLike;
    const actor = ref.sessionId;
    switch (event.type) {
      case '@xstate.actor':
        registerActor(ref);
        return;
      case '@xstate.event': {
        const source = event.sourceRef as unknown as ActorLike | undefined;
        entries.push({
          ...stamp(),
          kind: 'event',
          actor,
          type: event.event.type,
          source: source?.sessionId ?? null,
          ...payloadOf(eventPayload(event.event)),
        });
        return;
      }
      case '@xstate.snapshot': {
        const snapshot = event.snapshot as {
          status: 'active' | 'done' | 'error' | 'stopped';
          value?: unknown;
          context?: unknown;
          error?: unknown;
        };
        const state = agentStateOf(snapshot.context);
        if (state) noteState(actor, state);
        const entry: TraceEntryOf<'snapshot'> = {
          ...stamp(),
          kind: 'snapshot',
          actor,
          status: snapshot.status,
          path: snapshot.value === undefined ? null : statePaths(snapshot.value),
          event: event.event.type,
        };
        if (snapshot.status === 'error') entry.error = errorInfo(snapshot.error);
        entries.push(entry);
        const checkpoint = pendingCheckpoint.get(actor);
        if (checkpoint && state) {
          pendingCheckpoint.delete(actor);
          pushCheckpoint(actor, state, checkpoint);
        }
        return;
      }
      case '@xstate.microstep': {
        if (!microsteps) return;
        const value = (event.snapshot as { value?: unknown }).value;
        if (value === undefined) return;
        const path = statePaths(value);
        const key = path.join('|');
        if (lastPath.get(actor) === key) return;
        lastPath.set(actor, key);
        entries.push({ ...stamp(), kind: 'microstep', actor, path, event: event.event.type });
        return;
      }
      case '@xstate.action': {
        // `emit()` shows up as the built-in action `xstate.emit` with the event in its params.
        if (event.action.type !== 'xstate.emit' || attached.has(actor)) return;
        recordEmitted(actor, (event.action.params as { event?: unknown } | undefined)?.event);
        return;
      }
    }
  };

  const inspect = (event: InspectionEvent) => {
    try {
      handle(event);
    } catch (error) {
      // Never disturb the run: what could not be recorded is recorded as an issue instead.
      entries.push({ ...stamp(), kind: 'issue', message: `${event.type}: ${errorInfo(error).message}` });
    }
  };

  const stateOfAttached = (actor: AttachableActor) =>
    agentStateOf((actor.getSnapshot() as { context?: unknown } | undefined)?.context);

  const recorder: TraceRecorder = {
    inspect,
    attach(actor) {
      registerActor(actor as unknown as ActorLike);
      attached.set(actor.sessionId, actor);
      const subscription = actor.on('*', (event) => {
        recordEmitted(actor.sessionId, event);
        if (pendingCheckpoint.has(actor.sessionId)) {
          // The emitting macrostep is synchronous: by the next microtask the snapshot is current.
          queueMicrotask(() => {
            const checkpoint = pendingCheckpoint.get(actor.sessionId);
            const state = stateOfAttached(actor);
            if (!checkpoint || !state) return;
            pendingCheckpoint.delete(actor.sessionId);
            noteState(actor.sessionId, state);
            pushCheckpoint(actor.sessionId, state, checkpoint);
          });
        }
      });
      return () => {
        subscription.unsubscribe();
        const state = stateOfAttached(actor);
        if (state) noteState(actor.sessionId, state);
        attached.delete(actor.sessionId);
      };
    },
    addState(state) {
      const known = agents.get(state.agentId());
      if (known) known.state = state;
      else agents.set(state.agentId(), { actor: null, state });
      pushCheckpoint(null, state, 'added');
    },
    trace() {
      for (const [session, actor] of attached) {
        const state = stateOfAttached(actor);
        if (state) noteState(session, state);
      }
      const agentList = [...agents.values()].map(({ actor, state }) => ({
        actor,
        agentId: state.agentId(),
        parentAgentId: state.parentAgentId(),
        state: blobs.putState(state.toJSON()),
      }));
      return {
        format: TRACE_FORMAT,
        version: TRACE_VERSION,
        title: options.title ?? null,
        startedAt: new Date(startedAtMs).toISOString(),
        endedAt: new Date(Math.max(Date.now(), startedAtMs)).toISOString(),
        actors: [...actors.values()].map((a) => ({ ...a })),
        entries: [...entries],
        agents: agentList,
        blobs: blobs.toJSON(),
      };
    },
    toJSON() {
      return recorder.trace();
    },
    async write(path) {
      const trace = recorder.trace();
      const { mkdir, writeFile } = await import('node:fs/promises');
      const { dirname } = await import('node:path');
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, JSON.stringify(trace));
      return trace;
    },
  };
  return recorder;
}

/** The active state paths of a state value: `{ inProgress: { step: 'tools' } }` -> `['inProgress.step.tools']`. */
function statePaths(value: unknown): string[] {
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

function srcName(src: unknown): string {
  if (typeof src === 'string') return src;
  if (isObject(src)) {
    if (typeof src.id === 'string') return src.id;
    const config = src.config;
    if (isObject(config) && typeof config.id === 'string') return config.id;
  }
  return 'anonymous';
}

function agentStateOf(context: unknown): AgentState | null {
  if (!isObject(context)) return null;
  const state = context.state;
  if (state instanceof AgentState) return state;
  return null;
}

/** What to keep of a received event: nothing of XState's own (their payloads are states), but errors. */
/**
 * What an event carries besides its type. AgentStates are left out (a step worker's request and
 * answer carry the whole state; the trace keeps states as checkpoints), errors are `{ name, message }`.
 */
function eventPayload(event: { type: string } & Record<string, unknown>): unknown {
  if (event.type.startsWith('xstate.error.') || WORKER_ERROR.test(event.type))
    return { error: errorInfo(event.error) };
  if (event.type.startsWith('xstate.')) return undefined;
  const rest = Object.entries(event).filter(
    ([key, value]) => key !== 'type' && !(value instanceof AgentState),
  );
  return rest.length ? Object.fromEntries(rest) : undefined;
}

const WORKER_ERROR = /^(driver|toolExecutor)\.error$/;

function errorInfo(error: unknown): { name: string; message: string } {
  if (error instanceof Error) return { name: error.name, message: error.message };
  if (isObject(error) && typeof error.message === 'string')
    return { name: typeof error.name === 'string' ? error.name : 'Error', message: error.message };
  return { name: 'Error', message: String(error) };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/**
 * A plain JSON copy of `value`: `toJSON()` honoured, errors as `{ name, message }`, actor refs as
 * `{ actor: sessionId }`, functions and `undefined` dropped, cycles cut, an own `__proto__` key kept as data.
 */
function toJsonValue(value: unknown, depth = 0, seen = new Set<object>()): unknown {
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
