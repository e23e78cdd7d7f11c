/**
 * The trace format: what `recordTrace()` writes and `readTrace()` / the run viewer read. One JSON
 * object, versioned, validated by the zod schemas below (the TypeScript types are inferred from
 * them). See TRACE_FORMAT.md next to this file for the field-by-field description.
 */
import { z } from 'zod';
import { AgentMachineError } from '../state/errors';
import { jsonValueSchema } from '../state/schemas';

/** The value of a trace's `format` field. */
export const TRACE_FORMAT = 'agent-machine/trace';
/** The trace format version this library writes and reads. */
export const TRACE_VERSION = 1;

/** A trace that does not match its schema, or refers to a blob it does not hold. */
export class InvalidTraceError extends AgentMachineError {
  static override get name(): string {
    return 'InvalidTraceError';
  }

  constructor(
    /** Where the first problem is, e.g. `entries[3].t` or `blobs.<hash>.context`. */
    readonly path: string,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super('INVALID_TRACE', `Invalid trace at ${path || '(root)'}: ${detail}`, options);
  }
}

const timestamp = z.iso.datetime({ offset: true });
const count = z.number().int().nonnegative();
/** Milliseconds since the recorder was created. */
const elapsed = z.number().finite().nonnegative();
/** An actor's XState session id (`x:0`, `x:1`, ...), unique within the recording. */
const actorKey = z.string().min(1);
/** A blob's key: 22 base64url characters (`contentHash`), or 32 hex digits in traces of earlier versions. */
const blobHashSchema = z
  .string()
  .regex(/^(?:[A-Za-z0-9_-]{22}|[0-9a-f]{32})$/, 'expected a content hash (22 base64url characters)');

const traceErrorSchema = z.strictObject({ name: z.string(), message: z.string() });

/** An actor the system created: the agent itself, or an actor it invoked (driver, toolExecutor, hooks). */
const traceActorSchema = z.strictObject({
  seq: count,
  t: elapsed,
  actor: actorKey,
  /** The actor's id: the invoke id (`driver`), or the session id for a root actor. */
  id: z.string(),
  systemId: z.string().nullable(),
  /** The logic's name: the machine id (`agent`) or the actor source name (`driver`). */
  src: z.string(),
  parent: actorKey.nullable(),
  /** The AgentState's agentId, for actors whose context holds one. */
  agentId: z.string().min(1).nullable(),
});

const entryBase = { seq: count, t: elapsed };
/** Small payloads are inline (`payload`); larger ones are in `blobs` (`payloadBlob`). */
const payloadFields = { payload: jsonValueSchema.optional(), payloadBlob: blobHashSchema.optional() };

const traceEntrySchema = z.discriminatedUnion('kind', [
  /** An event an actor received. */
  z.strictObject({
    ...entryBase,
    kind: z.literal('event'),
    actor: actorKey,
    type: z.string(),
    source: actorKey.nullable(),
    ...payloadFields,
  }),
  /** An actor's snapshot after a macrostep: its status and, for machines, the active state paths. */
  z.strictObject({
    ...entryBase,
    kind: z.literal('snapshot'),
    actor: actorKey,
    status: z.enum(['active', 'done', 'error', 'stopped']),
    path: z.array(z.string()).nullable(),
    event: z.string(),
    error: traceErrorSchema.optional(),
  }),
  /** A machine's state after one transition (including eventless ones), when it changed. */
  z.strictObject({
    ...entryBase,
    kind: z.literal('microstep'),
    actor: actorKey,
    path: z.array(z.string()),
    event: z.string(),
  }),
  /** An event the library emitted (`actor.on(type, ...)`): execution.started, step.finished, ... */
  z.strictObject({
    ...entryBase,
    kind: z.literal('emitted'),
    actor: actorKey.nullable(),
    type: z.string(),
    agentId: z.string().nullable(),
    ...payloadFields,
  }),
  /** An AgentState checkpoint: after an execution (or a step, with `checkpoints: 'step'`). */
  z.strictObject({
    ...entryBase,
    kind: z.literal('state'),
    actor: actorKey.nullable(),
    agentId: z.string().min(1),
    parentAgentId: z.string().min(1).nullable(),
    reason: z.enum(['step.finished', 'execution.finished', 'added']),
    state: blobHashSchema,
  }),
  /** Something the recorder could not record; the run itself was not affected. */
  z.strictObject({
    ...entryBase,
    kind: z.literal('issue'),
    message: z.string(),
  }),
]);

/** The last AgentState of each agent the recorder saw. */
const traceAgentSchema = z.strictObject({
  actor: actorKey.nullable(),
  agentId: z.string().min(1),
  parentAgentId: z.string().min(1).nullable(),
  state: blobHashSchema,
});

export const traceSchema = z.strictObject({
  format: z.literal(TRACE_FORMAT),
  version: z.literal(TRACE_VERSION),
  title: z.string().nullable(),
  startedAt: timestamp,
  endedAt: timestamp,
  actors: z.array(traceActorSchema),
  entries: z.array(traceEntrySchema),
  agents: z.array(traceAgentSchema),
  /** Content-addressed values: the key is the hash of the value's canonical JSON. */
  blobs: z.record(blobHashSchema, jsonValueSchema),
});

export type Trace = z.infer<typeof traceSchema>;
export type TraceActor = z.infer<typeof traceActorSchema>;
export type TraceEntry = z.infer<typeof traceEntrySchema>;
export type TraceAgent = z.infer<typeof traceAgentSchema>;
export type TraceEntryKind = TraceEntry['kind'];
/** One kind of entry, e.g. `TraceEntryOf<'emitted'>`. */
export type TraceEntryOf<K extends TraceEntryKind> = Extract<TraceEntry, { kind: K }>;
