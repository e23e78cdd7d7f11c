/**
 * The run viewer's data: one plain, JSON-ready description of a run built from a trace or an
 * AgentState. The HTML page renders it; tests and other front ends may use it as it is.
 */
import { AgentState } from '../state/agent-state';
import type { AppendOnlyList } from '../state/append-only-list';
import { AgentMachineError, InvalidStateError } from '../state/errors';
import type { Message } from '../state/message';
import type { AgentStateJSON } from '../state/schemas';
import { Usage } from '../state/usage';
import { isRecord } from './trace-blobs';
import { readTrace, traceStates } from './trace-reader';
import { TRACE_FORMAT, type Trace, type TraceEntry } from './trace-schema';

/** Input that is neither a trace nor an AgentState. */
export class NotARunError extends AgentMachineError {
  constructor(detail: string) {
    super('NOT_A_RUN', `Not a trace or an AgentState: ${detail}`);
  }
}

/** What the viewer accepts: a trace, an AgentState, or an AgentState's `toJSON()`. */
export type RunInput = Trace | AgentState | AgentStateJSON;

export interface UsageView {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly totalTokens: number;
  readonly cost: number;
}
export interface ErrorView {
  readonly name: string;
  readonly message: string;
  readonly code: string | null;
  /** The step it happened in (1-based), and the tool call if it was a tool's. */
  readonly stepNumber: number | null;
  readonly toolName: string | null;
}
export interface MessageView {
  readonly role: string;
  readonly content: string;
  readonly toolCalls?: ReadonlyArray<{ readonly id: string; readonly name: string; readonly args: string }>;
  readonly toolCallId?: string;
  readonly toolName?: string;
  readonly isError?: boolean;
}
export interface ToolView {
  readonly callId: string;
  readonly name: string;
  readonly args: string;
  /** The result as text (JSON for non-strings); null when the call failed. */
  readonly result: string | null;
  readonly error: ErrorView | null;
  readonly blocked: boolean;
  /** Milliseconds from the step's start, and the call's duration. */
  readonly offsetMs: number;
  readonly durationMs: number;
  /** The subagent this call ran, when the data links one. */
  readonly childAgent: string | null;
  /** A subagent call whose child waits for decisions on its tool calls (no result yet). */
  readonly waiting: boolean;
}
/** A tool call waiting for a person's decision, as `state.pendingApprovals()` lists it. */
export interface PendingApprovalView {
  readonly toolCallId: string;
  readonly toolName: string;
  readonly args: string;
  /** The subagents that lead to the call (empty for the agent's own calls). */
  readonly path: readonly string[];
}
export interface StepView {
  readonly number: number;
  readonly id: string;
  readonly type: string;
  /** True for a step still in flight (an AgentState taken mid-run). */
  readonly inFlight: boolean;
  /** Milliseconds from the execution's start. */
  readonly offsetMs: number;
  readonly durationMs: number;
  /** The model call within the step; `measured` when timed from the trace, else estimated. */
  readonly model: { readonly offsetMs: number; readonly durationMs: number; readonly measured: boolean };
  readonly finishReason: string | null;
  readonly text: string;
  readonly usage: UsageView;
  readonly tools: readonly ToolView[];
  /** Errors of the step itself (tool errors are on the tools). */
  readonly errors: readonly ErrorView[];
  /** Stop signals raised by the end of this step (new ones only), as `reason: message`. */
  readonly stopSignals: readonly string[];
  /** How the step's prompt was compacted to fit the context window (from the trace), if it was. */
  readonly compaction: string | null;
  /** Input messages as `[from, to)` ranges of RunView.messages; `newFrom` = how many were seen before. */
  readonly input: ReadonlyArray<readonly [number, number]>;
  readonly inputCount: number;
  readonly newFrom: number;
  readonly output: readonly number[];
}
export interface PathView {
  readonly path: string;
  readonly t: number | null;
}
export interface ActorView {
  readonly actor: string;
  readonly id: string;
  readonly src: string;
  readonly systemId: string | null;
  readonly startMs: number;
  readonly durationMs: number | null;
  readonly status: string;
  readonly agent: string | null;
  readonly children: readonly ActorView[];
}
export interface EventView {
  readonly t: number;
  readonly kind: 'emitted' | 'event';
  readonly type: string;
  readonly summary: string;
}
export interface AgentView {
  /** `a0`, `a1`, ...: the page's key for the agent. */
  readonly key: string;
  readonly agentId: string;
  readonly parentAgentId: string | null;
  readonly parentKey: string | null;
  readonly childKeys: readonly string[];
  readonly depth: number;
  /** The parent's tool call that ran this agent, when known. */
  readonly spawnedBy: { readonly stepNumber: number; readonly toolName: string } | null;
  readonly status: string;
  readonly stopReason: string | null;
  readonly stopMessage: string | null;
  readonly stopSource: string | null;
  readonly executionId: string | null;
  readonly executionCount: number;
  readonly startedAt: string | null;
  readonly durationMs: number | null;
  /** Everything the execution spent, its subagents' runs included. */
  readonly usage: UsageView;
  /** What this agent's own model calls and tools spent, without its subagents' runs: sums of these count each token once. */
  readonly ownUsage: UsageView;
  readonly stepCount: number;
  readonly systemPrompt: string;
  readonly finalResponse: string;
  /** Calls the run waits for decisions on: its own, and those inside its waiting subagents. */
  readonly pendingApprovals: readonly PendingApprovalView[];
  readonly errors: readonly ErrorView[];
  readonly steps: readonly StepView[];
  /** The statechart path (consecutive repeats merged); null without a trace. */
  readonly statePath: readonly PathView[] | null;
  readonly actorTree: ActorView | null;
  readonly events: readonly EventView[] | null;
}
export interface RunView {
  readonly title: string;
  readonly source: 'trace' | 'state';
  readonly startedAt: string | null;
  readonly agents: readonly AgentView[];
  readonly messages: readonly MessageView[];
  /** Things the data could not show: issues the recorder logged, child states that did not decode. */
  readonly notes: readonly string[];
}

/**
 * Recognises the input: a Trace (validated with `readTrace`), an AgentState, or an AgentState's
 * JSON (decoded with `AgentState.fromJSON`). Raises InvalidTraceError / InvalidStateError naming
 * the bad field, or NotARunError when the data is neither.
 *
 * @example
 * const run = parseRun(JSON.parse(text)); // { kind: 'trace', trace } | { kind: 'state', state }
 */
export function parseRun(
  data: unknown,
): { kind: 'trace'; trace: Trace } | { kind: 'state'; state: AgentState } {
  if (data instanceof AgentState) return { kind: 'state', state: data };
  if (!isRecord(data)) {
    const what = Array.isArray(data) ? 'an array' : data === null ? 'null' : `a ${typeof data}`;
    throw new NotARunError(
      `got ${what}; expected a trace (format "${TRACE_FORMAT}") or an AgentState's JSON`,
    );
  }
  if ('format' in data || ('entries' in data && 'blobs' in data))
    return { kind: 'trace', trace: readTrace(data) };
  if ('formatVersion' in data || ('agentId' in data && 'context' in data))
    return { kind: 'state', state: AgentState.fromJSON(data) };
  const keys = Object.keys(data).slice(0, 5);
  throw new NotARunError(
    `an object with ${keys.length ? `keys ${keys.map((k) => `"${k}"`).join(', ')}` : 'no keys'}; expected a trace (format "${TRACE_FORMAT}") or an AgentState's JSON (formatVersion, agentId, context, ...)`,
  );
}

interface AgentSource {
  readonly state: AgentState;
  readonly actor: string | null;
  spawnedBy: { parentId: string; stepNumber: number; toolName: string; toolCallId?: string } | null;
}

/**
 * Builds the viewer's description of a run.
 *
 * @example
 * const view = buildRunView(recorder.trace());
 * view.agents[0].steps.map((s) => s.type); // ['tool_execution', 'error', 'final_response']
 */
export function buildRunView(input: RunInput, options: { title?: string } = {}): RunView {
  const run = parseRun(input);
  const notes: string[] = [];
  const sources: AgentSource[] =
    run.kind === 'trace'
      ? traceStates(run.trace).map((a) => ({ state: a.state, actor: a.actor, spawnedBy: null }))
      : [{ state: run.state, actor: null, spawnedBy: null }];
  const trace = run.kind === 'trace' ? run.trace : null;
  if (trace) for (const e of trace.entries) if (e.kind === 'issue') notes.push(`Recorder: ${e.message}`);

  discoverEmbeddedAgents(sources, notes);
  linkSpawningCalls(sources);

  // Tree order: roots (no known parent) first, each followed by its descendants.
  const byId = new Map(sources.map((s) => [s.state.agentId(), s]));
  const childrenOf = new Map<string, AgentSource[]>();
  const roots: AgentSource[] = [];
  for (const source of sources) {
    const parent = source.state.parentAgentId();
    if (parent !== null && byId.has(parent) && parent !== source.state.agentId()) {
      const list = childrenOf.get(parent) ?? [];
      list.push(source);
      childrenOf.set(parent, list);
    } else roots.push(source);
  }
  const ordered: Array<{ source: AgentSource; depth: number; parent: AgentSource | null }> = [];
  const visited = new Set<string>();
  const visit = (source: AgentSource, depth: number, parent: AgentSource | null) => {
    if (visited.has(source.state.agentId())) return;
    visited.add(source.state.agentId());
    ordered.push({ source, depth, parent });
    for (const child of childrenOf.get(source.state.agentId()) ?? []) visit(child, depth + 1, source);
  };
  for (const root of roots) visit(root, 0, null);

  const keyOf = new Map(ordered.map((o, i) => [o.source.state.agentId(), `a${i}`]));
  const messages = new MessageTable();
  const agents = ordered.map(({ source, depth, parent }) =>
    agentView(source, {
      key: keyOf.get(source.state.agentId()) as string,
      depth,
      parentKey: parent ? (keyOf.get(parent.state.agentId()) ?? null) : null,
      childKeys: (childrenOf.get(source.state.agentId()) ?? []).map(
        (c) => keyOf.get(c.state.agentId()) as string,
      ),
      keyOf,
      messages,
      trace,
      sources,
    }),
  );

  const root = agents[0];
  const title = options.title ?? trace?.title ?? (root ? `Run of agent ${shortId(root.agentId)}` : 'Run');
  return {
    title,
    source: run.kind,
    startedAt: trace?.startedAt ?? root?.startedAt ?? null,
    agents,
    messages: messages.views,
    notes,
  };
}

// ---- agents ------------------------------------------------------------------------------------

interface AgentContextArgs {
  readonly key: string;
  readonly depth: number;
  readonly parentKey: string | null;
  readonly childKeys: readonly string[];
  readonly keyOf: ReadonlyMap<string, string>;
  readonly messages: MessageTable;
  readonly trace: Trace | null;
  readonly sources: readonly AgentSource[];
}

function agentView(source: AgentSource, args: AgentContextArgs): AgentView {
  const { state } = source;
  const execution = state.execution();
  const execStart = execution?.startedAtMs() ?? null;
  const signal = state.stopSignal();
  const timing = args.trace && source.actor ? traceTiming(args.trace, source.actor, state) : null;
  const conversation = state.messageList();
  const conversationBase = args.messages.addList(conversation);

  const steps: StepView[] = [];
  const records = state.stepExecutions();
  let previousInput: AppendOnlyList<Message> | null = null;
  let seenSignals = 0;
  const stepViews = records.map((record) => ({
    step: record.step(),
    start: record.startedAt().getTime(),
    end: record.completedAt().getTime(),
    signals: record.continuation().stopSignals,
    inFlight: false,
  }));
  const current = state.currentStep();
  if (current) {
    const started = execution?.currentStepStartedAt()?.getTime() ?? Date.now();
    stepViews.push({ step: current, start: started, end: Date.now(), signals: [], inFlight: true });
  }
  stepViews.forEach((item, index) => {
    const number = index + 1;
    const { step } = item;
    const inputList = step.inputMessageList();
    const input = args.messages.ranges(inputList, conversation, conversationBase);
    const newFrom = previousInput?.isPrefixOf(inputList) ? previousInput.size : 0;
    previousInput = inputList;
    const output = step.outputMessages().map((m) => args.messages.add(m));
    const durationMs = Math.max(0, item.end - item.start);
    const childOf = (toolName: string, callId: string) =>
      args.sources.find(
        (s) =>
          s.spawnedBy?.parentId === state.agentId() &&
          s.spawnedBy.stepNumber === number &&
          s.spawnedBy.toolName === toolName &&
          (s.spawnedBy.toolCallId === undefined || s.spawnedBy.toolCallId === callId),
      );
    const tools = step.toolExecutions().map((execution): ToolView => {
      const error = execution.error();
      const child = childOf(execution.name(), execution.toolCallId());
      return {
        callId: execution.toolCallId(),
        name: execution.name(),
        args: pretty(execution.args()),
        result: error ? null : pretty(execution.value()),
        error: error ? errorView(error, number, execution.name()) : null,
        blocked: execution.wasBlocked(),
        offsetMs: clamp(execution.startedAt().getTime() - item.start, 0, durationMs),
        durationMs: Math.max(0, execution.completedAt().getTime() - execution.startedAt().getTime()),
        childAgent: child ? (args.keyOf.get(child.state.agentId()) ?? null) : null,
        waiting: false,
      };
    });
    // the calls of a waiting step whose subagent waits for decisions: no result yet
    const waitingChildren = item.inFlight ? (state.approval()?.children ?? {}) : {};
    for (const call of step.requestedToolCalls()) {
      if (!Object.hasOwn(waitingChildren, call.id)) continue;
      const child = childOf(call.name, call.id);
      tools.push({
        callId: call.id,
        name: call.name,
        args: pretty(call.args),
        result: null,
        error: null,
        blocked: false,
        offsetMs: 0,
        durationMs: 0,
        childAgent: child ? (args.keyOf.get(child.state.agentId()) ?? null) : null,
        waiting: true,
      });
    }
    const measured = timing?.model.get(number);
    const firstTool = tools.length ? Math.min(...tools.map((t) => t.offsetMs)) : durationMs;
    const model = measured
      ? {
          offsetMs: clamp(measured.start + (timing?.epoch ?? 0) - item.start, 0, durationMs),
          durationMs: measured.duration,
          measured: true,
        }
      : { offsetMs: 0, durationMs: firstTool, measured: false };
    const newSignals = item.signals.slice(seenSignals);
    if (!item.inFlight) seenSignals = item.signals.length;
    steps.push({
      number,
      id: step.id(),
      type: item.inFlight ? 'in_flight' : step.stepType(),
      inFlight: item.inFlight,
      offsetMs: execStart === null ? 0 : Math.max(0, item.start - execStart),
      durationMs,
      model,
      finishReason: step.finishReason(),
      text: step.outputText(),
      usage: usageView(step.usage()),
      tools,
      errors: step.stepErrors().map((e) => errorView(e, number, null)),
      stopSignals: newSignals.map((s) => `${s.reason}: ${s.message}${s.source ? ` (${s.source})` : ''}`),
      compaction: timing?.compactions.get(number) ?? null,
      input,
      inputCount: inputList.size,
      newFrom,
      output,
    });
  });

  const errors: ErrorView[] = [];
  for (const step of steps) {
    errors.push(...step.errors);
    for (const tool of step.tools) if (tool.error) errors.push(tool.error);
  }
  const completedAt = execution?.completedAt()?.getTime() ?? null;
  const lastEnd = steps.length
    ? (execStart ?? 0) + Math.max(...steps.map((s) => s.offsetMs + s.durationMs))
    : null;
  const endMs = completedAt ?? lastEnd;
  const spawnedBy = source.spawnedBy
    ? { stepNumber: source.spawnedBy.stepNumber, toolName: source.spawnedBy.toolName }
    : null;

  return {
    key: args.key,
    agentId: state.agentId(),
    parentAgentId: state.parentAgentId(),
    parentKey: args.parentKey,
    childKeys: args.childKeys,
    depth: args.depth,
    spawnedBy,
    status: state.status(),
    stopReason: state.stopReason(),
    stopMessage: signal?.message ?? null,
    stopSource: signal?.source ?? null,
    executionId: state.executionId(),
    executionCount: state.executionCount(),
    startedAt: execStart === null ? null : new Date(execStart).toISOString(),
    durationMs: execStart === null || endMs === null ? null : Math.max(0, endMs - execStart),
    usage: usageView(state.usage()),
    ownUsage: usageView(ownUsage(state)),
    stepCount: state.stepCount(),
    systemPrompt: state.systemPrompt(),
    finalResponse: state.finalResponse(),
    pendingApprovals: state.pendingApprovals().map((p) => ({
      toolCallId: p.toolCallId,
      toolName: p.toolName,
      args: pretty(p.args),
      path: p.path ?? [],
    })),
    errors,
    steps,
    statePath: timing?.path ?? null,
    actorTree: timing?.actorTree ?? null,
    events: timing?.events ?? null,
  };
}

// ---- trace timing ------------------------------------------------------------------------------

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

function traceTiming(trace: Trace, actor: string, state: AgentState): TraceTiming {
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

const REPORTS = new Set(['tool.started', 'tool.finished', 'text.delta', 'context.compacted']);

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

// ---- subagents ---------------------------------------------------------------------------------

/**
 * Child states: those the built-in `subagents` keep on their calls (`childState()`), and those
 * carried inside tool results (a subagent tool may return its child's state): any object within a
 * few levels of a tool execution's value that has the shape of an AgentState's JSON is decoded and
 * added, linked to the call that returned it.
 */
function discoverEmbeddedAgents(sources: AgentSource[], notes: string[]): void {
  const known = new Set(sources.map((s) => s.state.agentId()));
  for (let i = 0; i < sources.length; i++) {
    const parent = sources[i] as AgentSource;
    // children waiting for decisions, kept in their caller's waiting step
    const waiting = parent.state.approval()?.children ?? {};
    for (const call of parent.state.currentStep()?.requestedToolCalls() ?? []) {
      const child = Object.hasOwn(waiting, call.id) ? waiting[call.id] : undefined;
      if (!child || known.has(child.agentId())) continue;
      known.add(child.agentId());
      sources.push({
        state: child,
        actor: null,
        spawnedBy: {
          parentId: parent.state.agentId(),
          stepNumber: parent.state.stepCount() + 1,
          toolName: call.name,
          toolCallId: call.id,
        },
      });
    }
    parent.state.steps().forEach((step, index) => {
      for (const execution of step.toolExecutions()) {
        const kept = execution.childState();
        for (const candidate of [...(kept ? [kept] : []), ...stateShapes(execution.value(), 0)]) {
          let child: AgentState;
          try {
            child = candidate instanceof AgentState ? candidate : AgentState.fromJSON(candidate);
          } catch (error) {
            if (!(error instanceof InvalidStateError)) throw error;
            notes.push(
              `A child state in step ${index + 1}'s ${execution.name()} result did not decode: ${error.message}`,
            );
            continue;
          }
          if (known.has(child.agentId())) continue;
          known.add(child.agentId());
          sources.push({
            state: child,
            actor: null,
            spawnedBy: {
              parentId: parent.state.agentId(),
              stepNumber: index + 1,
              toolName: execution.name(),
            },
          });
        }
      }
    });
  }
}

function* stateShapes(value: unknown, depth: number): Generator<unknown> {
  if (depth > 3 || typeof value !== 'object' || value === null) return;
  if (value instanceof AgentState) {
    yield value;
    return;
  }
  if (Array.isArray(value)) {
    for (const item of value.slice(0, 50)) yield* stateShapes(item, depth + 1);
    return;
  }
  const record = value as Record<string, unknown>;
  if ('formatVersion' in record && 'agentId' in record && 'context' in record && 'execution' in record) {
    yield record;
    return;
  }
  for (const item of Object.values(record).slice(0, 50)) yield* stateShapes(item, depth + 1);
}

/** For children known from elsewhere (a trace), find the parent's tool call whose result names them. */
function linkSpawningCalls(sources: AgentSource[]): void {
  const byId = new Map(sources.map((s) => [s.state.agentId(), s]));
  for (const child of sources) {
    if (child.spawnedBy) continue;
    const parentId = child.state.parentAgentId();
    const parent = parentId ? byId.get(parentId) : undefined;
    if (!parent || !parentId) continue;
    const id = child.state.agentId();
    parent.state.steps().forEach((step, index) => {
      if (child.spawnedBy) return;
      for (const execution of step.toolExecutions()) {
        const text = safeJson(execution.value());
        if (text.includes(id)) {
          child.spawnedBy = { parentId, stepNumber: index + 1, toolName: execution.name() };
          return;
        }
      }
    });
  }
}

// ---- messages ----------------------------------------------------------------------------------

/** Messages stored once for the page, by identity: a step's input is a range of the conversation. */
class MessageTable {
  readonly views: MessageView[] = [];
  private readonly index = new Map<Message, number>();

  add(message: Message): number {
    const known = this.index.get(message);
    if (known !== undefined) return known;
    const i = this.views.length;
    this.views.push(messageView(message));
    this.index.set(message, i);
    return i;
  }

  /** Adds a whole list; returns the index of its first message when they got contiguous indexes. */
  addList(list: AppendOnlyList<Message>): number | null {
    const base = this.views.length;
    let expected = base;
    let contiguous = true;
    for (const message of list) {
      if (this.add(message) !== expected) contiguous = false;
      expected++;
    }
    return contiguous ? base : null;
  }

  ranges(
    list: AppendOnlyList<Message>,
    conversation: AppendOnlyList<Message>,
    conversationBase: number | null,
  ): Array<[number, number]> {
    if (list.size === 0) return [];
    if (conversationBase !== null && list.isPrefixOf(conversation))
      return [[conversationBase, conversationBase + list.size]];
    const out: Array<[number, number]> = [];
    for (const message of list) {
      const i = this.add(message);
      const last = out[out.length - 1];
      if (last && last[1] === i) last[1] = i + 1;
      else out.push([i, i + 1]);
    }
    return out;
  }
}

function messageView(message: Message): MessageView {
  const view: {
    role: string;
    content: string;
    toolCalls?: Array<{ id: string; name: string; args: string }>;
    toolCallId?: string;
    toolName?: string;
    isError?: boolean;
  } = { role: message.role, content: message.content };
  if (message.toolCalls?.length)
    view.toolCalls = message.toolCalls.map((c) => ({ id: c.id, name: c.name, args: pretty(c.args) }));
  if (message.toolCallId !== undefined) view.toolCallId = message.toolCallId;
  if (message.toolName !== undefined) view.toolName = message.toolName;
  if (message.isError) view.isError = true;
  return view;
}

// ---- small helpers -----------------------------------------------------------------------------

const MAX_TEXT = 20_000;

function pretty(value: unknown): string {
  if (typeof value === 'string') return truncate(value, MAX_TEXT);
  if (value === undefined) return '';
  return truncate(safeJson(value, 2), MAX_TEXT);
}

function safeJson(value: unknown, indent?: number): string {
  try {
    return JSON.stringify(value, null, indent) ?? String(value);
  } catch (error) {
    return `[unserializable: ${(error as Error).message}]`;
  }
}

function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/** The state's usage without what its subagents spent (kept on the calls that ran them). */
function ownUsage(state: AgentState): Usage {
  let usage = Usage.zero;
  for (const step of state.steps()) {
    usage = Usage.add(usage, step.inferenceResponse().usage);
    for (const execution of step.toolExecutions())
      if (execution.childState() === null) usage = Usage.add(usage, execution.usage());
  }
  return usage;
}

function usageView(usage: Usage): UsageView {
  return {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    totalTokens: usage.totalTokens,
    cost: usage.cost,
  };
}

function errorView(
  error: { name: string; message: string; code: string | null },
  stepNumber: number | null,
  toolName: string | null,
): ErrorView {
  return { name: error.name, message: error.message, code: error.code, stepNumber, toolName };
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(Math.max(value, min), Math.max(min, max));
}

export function shortId(id: string): string {
  return id.length > 8 ? id.slice(0, 8) : id;
}
