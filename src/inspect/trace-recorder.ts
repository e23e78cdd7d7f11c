import type { InspectionEvent } from 'xstate';
import type { AgentState } from '../state/agent-state';
import { BlobTable } from './trace-blobs';
import {
  TRACE_FORMAT,
  TRACE_VERSION,
  type Trace,
  type TraceActor,
  type TraceEntry,
  type TraceEntryOf,
} from './trace-schema';
import {
  agentStateOf,
  errorInfo,
  eventPayload,
  isObject,
  srcName,
  statePaths,
  toJsonValue,
} from './trace-values';

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

  const stateOfAttached = (actor: AttachableActor) => {
    const snapshot = actor.getSnapshot();
    return agentStateOf(isObject(snapshot) ? snapshot.context : undefined);
  };

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
