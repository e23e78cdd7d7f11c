/**
 * The run viewer's data: one plain, JSON-ready description of a run built from a trace or an
 * AgentState. The HTML page renders it; tests and other front ends may use it as it is.
 */
import type { ReplayDivergence } from '../replay/replay-tracks';
import { AgentState } from '../state/agent-state';
import { agentView } from './run-agents';
import { MessageTable } from './run-messages';
import { discoverEmbeddedAgents, linkSpawningCalls } from './run-subagents';
import {
  type AgentSource,
  type AgentView,
  type DivergenceView,
  NotARunError,
  type RunInput,
  type RunView,
} from './run-view';
import { isRecord } from './trace-blobs';
import { readTrace, traceStates } from './trace-reader';
import { TRACE_FORMAT, type Trace } from './trace-schema';
import { shortId } from './view-helpers';

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

/**
 * Builds the viewer's description of a run.
 *
 * @example
 * const view = buildRunView(recorder.trace());
 * view.agents[0].steps.map((s) => s.type); // ['tool_execution', 'error', 'final_response']
 */
export function buildRunView(
  input: RunInput,
  options: { title?: string; divergence?: ReplayDivergence | null } = {},
): RunView {
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

  const divergence = options.divergence;
  if (divergence && agents[0]) agents[0] = withDivergence(agents[0], divergence, notes);
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

/** The root agent with the replay's divergence beside the step it names (in the notes if it has none). */
function withDivergence(agent: AgentView, divergence: ReplayDivergence, notes: string[]): AgentView {
  const shown = (value: unknown) => {
    const text = value === undefined ? 'undefined' : JSON.stringify(value);
    return text.length > 300 ? `${text.slice(0, 300)}...` : text;
  };
  const view: DivergenceView = {
    kind: divergence.kind,
    path: divergence.path,
    recorded: shown(divergence.recorded),
    replayed: shown(divergence.replayed),
  };
  if (!agent.steps.some((step) => step.number === divergence.stepNumber)) {
    notes.push(
      `Replay diverged at step ${divergence.stepNumber} (${view.kind}) at ${view.path}: recorded ${view.recorded}, replayed ${view.replayed}`,
    );
    return agent;
  }
  return {
    ...agent,
    steps: agent.steps.map((step) =>
      step.number === divergence.stepNumber ? { ...step, divergence: view } : step,
    ),
  };
}

export * from './run-view';
