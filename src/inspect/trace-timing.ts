/** What a trace adds to an agent's view: times, the path through the chart, events and their summaries. */
import type { AgentState } from '../state/agent-state';
import type { ActorView, EventView, PathView } from './run-view';
import { isRecord } from './trace-blobs';
import type { Trace, TraceEntry } from './trace-schema';
import { truncate } from './view-helpers';

interface TraceTiming {
  /** Epoch ms of the trace's `t = 0`. */
  readonly epoch: number;
  /** Model call per step number of the state's execution: start (trace ms) and duration. */
  readonly model: Map<number, { start: number; duration: number }>;
  readonly path: PathView[];
  readonly actorTree: ActorView | null;
  readonly events: EventView[];
  /** `context.compacted` per step number of the state's execution, described. */
  readonly compactions: Map<number, string>;
}

export function traceTiming(trace: Trace, actor: string, state: AgentState): TraceTiming {
  const epoch = Date.parse(trace.startedAt);
  const executionId = state.executionId();
  const mine = trace.entries.filter((e) => 'actor' in e && e.actor === actor);

  // The statechart path: microsteps when recorded (they include eventless states), else snapshots.
  const hasMicrosteps = mine.some((e) => e.kind === 'microstep');
  const path: PathView[] = [];
  for (const e of mine) {
    if (!(hasMicrosteps ? e.kind === 'microstep' : e.kind === 'snapshot' && e.path)) continue;
    const value = ((e as { path: string[] | null }).path ?? []).join(' | ');
    if (!value || path[path.length - 1]?.path === value) continue;
    path.push({ path: value, t: e.t });
  }
  if (hasMicrosteps) {
    // The initial state is entered without a microstep: take it from the first snapshot.
    const first = mine.find((e) => e.kind === 'snapshot' && e.path);
    const firstPath = first && first.kind === 'snapshot' ? (first.path ?? []).join(' | ') : '';
    if (firstPath && path[0]?.path !== firstPath && first && first.t <= (path[0]?.t ?? Infinity))
      path.unshift({ path: firstPath, t: first.t });
  }

  // Lifetimes of the actors this one invoked.
  const ends = new Map<string, { t: number; status: string }>();
  for (const e of trace.entries) {
    if (
      e.kind === 'event' &&
      e.source &&
      /^xstate\.(done|error)\.actor\./.test(e.type) &&
      !ends.has(e.source)
    )
      ends.set(e.source, { t: e.t, status: e.type.startsWith('xstate.done') ? 'done' : 'error' });
    if (e.kind === 'snapshot' && e.status !== 'active' && !ends.has(e.actor))
      ends.set(e.actor, { t: e.t, status: e.status });
  }
  const byParent = new Map<string | null, typeof trace.actors>();
  for (const a of trace.actors) {
    const list = byParent.get(a.parent) ?? [];
    list.push(a);
    byParent.set(a.parent, list);
  }
  const agentKeyOf = new Map(trace.actors.map((a) => [a.actor, a.agentId]));
  const actorRecords = new Map(trace.actors.map((a) => [a.actor, a]));
  const buildTree = (key: string, depth: number): ActorView | null => {
    const record = actorRecords.get(key);
    if (!record) return null;
    const end = ends.get(key);
    return {
      actor: record.actor,
      id: record.id,
      src: record.src,
      systemId: record.systemId,
      startMs: record.t,
      durationMs: end ? Math.max(0, end.t - record.t) : null,
      status: end?.status ?? 'active',
      agent: agentKeyOf.get(key) ?? null,
      children:
        depth > 20
          ? []
          : (byParent.get(key) ?? []).map((c) => buildTree(c.actor, depth + 1)).filter((c) => c !== null),
    };
  };

  // Step windows from the emitted step events of this execution; model calls inside them.
  const model = new Map<number, { start: number; duration: number }>();
  const windows = new Map<number, { start: number; end: number }>();
  const compactions = new Map<number, string>();
  for (const e of mine) {
    if (e.kind === 'emitted' && e.type === 'context.compacted') {
      const payload = payloadOf(e, trace);
      if (
        payload &&
        (!executionId || payload.executionId === executionId) &&
        typeof payload.stepNumber === 'number'
      )
        compactions.set(payload.stepNumber, describeCompaction(payload));
      continue;
    }
    if (e.kind !== 'emitted' || (e.type !== 'step.started' && e.type !== 'step.finished')) continue;
    const payload = isRecord(e.payload) ? e.payload : {};
    if (executionId && payload.executionId !== executionId) continue;
    const n = typeof payload.stepNumber === 'number' ? payload.stepNumber : null;
    if (n === null) continue;
    const w = windows.get(n) ?? { start: e.t, end: Number.POSITIVE_INFINITY };
    if (e.type === 'step.started') w.start = e.t;
    else w.end = e.t;
    windows.set(n, w);
  }
  // A model call: a `work` request the agent's driver received, until the driver's answer.
  const drivers = new Set(
    (byParent.get(actor) ?? []).filter((a) => a.id === 'driver' || a.src === 'driver').map((a) => a.actor),
  );
  const calls: Array<{ start: number; end: number }> = [];
  let request: number | null = null;
  for (const e of trace.entries) {
    if (e.kind !== 'event') continue;
    if (drivers.has(e.actor) && e.type === 'work') request = e.t;
    else if (request !== null && e.actor === actor && e.source !== null && drivers.has(e.source)) {
      calls.push({ start: request, end: e.t });
      request = null;
    }
  }
  for (const [n, w] of windows) {
    const call = calls.find((c) => c.start >= w.start && c.start <= w.end);
    if (call) model.set(n, { start: call.start, duration: Math.max(0, call.end - call.start) });
  }

  const events: EventView[] = [];
  for (const e of mine) {
    if (e.kind === 'emitted')
      events.push({ t: e.t, kind: 'emitted', type: e.type, summary: summarize(e, trace) });
    else if (e.kind === 'event' && !e.type.startsWith('xstate.') && !REPORTS.has(e.type))
      events.push({ t: e.t, kind: 'event', type: e.type, summary: summarize(e, trace) });
  }
  return { epoch, model, path, actorTree: buildTree(actor, 0), events, compactions };
}

const REPORTS = new Set([
  'tool.started',
  'tool.finished',
  'text.delta',
  'context.compacted',
  'ledger.reserved',
  'ledger.settled',
]);

function payloadOf(entry: TraceEntry, trace: Trace): Record<string, unknown> | null {
  if (entry.kind !== 'emitted' && entry.kind !== 'event') return null;
  const payload = entry.payloadBlob !== undefined ? trace.blobs[entry.payloadBlob] : entry.payload;
  return isRecord(payload) ? payload : null;
}

/** `tool-results: 7 messages removed, 7,032 → 4,778 tokens (forced by the provider)`. */
function describeCompaction(p: Record<string, unknown>): string {
  const count = (v: unknown) => (typeof v === 'number' ? v.toLocaleString('en-US') : '?');
  const removed = typeof p.messagesRemoved === 'number' ? p.messagesRemoved : 0;
  return `${String(p.strategy)}: ${removed} message${removed === 1 ? '' : 's'} removed, ${count(p.tokensBefore)} → ${count(p.tokensAfter)} tokens${p.forced === true ? ' (forced by the provider)' : ''}`;
}

function summarize(entry: TraceEntry, trace: Trace): string {
  const p = payloadOf(entry, trace);
  if (!p) return '';
  if (entry.kind === 'emitted' && entry.type === 'context.compacted')
    return `step ${String(p.stepNumber)} · ${describeCompaction(p)}`;
  const parts: string[] = [];
  if (typeof p.stepNumber === 'number') parts.push(`step ${p.stepNumber}`);
  if (typeof p.toolName === 'string') parts.push(p.toolName);
  if (typeof p.ok === 'boolean') parts.push(p.ok ? 'ok' : 'failed');
  if (isRecord(p.error) && typeof p.error.message === 'string') parts.push(p.error.message);
  if (typeof p.stepType === 'string') parts.push(p.stepType);
  if (isRecord(p.usage) && typeof p.usage.totalTokens === 'number')
    parts.push(`${p.usage.totalTokens} tokens`);
  if (typeof p.shouldStop === 'boolean') parts.push(p.shouldStop ? 'stop' : 'go on');
  if (typeof p.status === 'string') parts.push(p.status);
  if (typeof p.stopReason === 'string') parts.push(p.stopReason);
  if (typeof p.stepCount === 'number') parts.push(`${p.stepCount} steps`);
  if (typeof p.text === 'string') parts.push(JSON.stringify(truncate(p.text, 80)));
  if (typeof p.reason === 'string') parts.push(p.reason);
  if (typeof p.delta === 'string') parts.push(JSON.stringify(truncate(p.delta, 40)));
  return parts.join(' · ');
}
