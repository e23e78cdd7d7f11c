/** Subagents of a run: children carried in tool results, and the calls that spawned them. */
import { AgentState } from '../state/agent-state';
import { InvalidStateError } from '../state/errors';
import type { AgentSource } from './run-view';
import { safeJson } from './view-helpers';

/**
 * Child states: those the built-in `subagents` keep on their calls (`childState()`), and those
 * carried inside tool results (a subagent tool may return its child's state): any object within a
 * few levels of a tool execution's value that has the shape of an AgentState's JSON is decoded and
 * added, linked to the call that returned it.
 */
export function discoverEmbeddedAgents(sources: AgentSource[], notes: string[]): void {
  const known = new Set(sources.map((s) => s.state.agentId()));
  const adopt = (child: AgentState, spawnedBy: NonNullable<AgentSource['spawnedBy']>) => {
    if (known.has(child.agentId())) return;
    known.add(child.agentId());
    sources.push({ state: child, actor: null, spawnedBy });
  };
  for (let i = 0; i < sources.length; i++) {
    const parent = sources[i] as AgentSource;
    // children waiting for decisions, kept in their caller's waiting step
    const waiting = parent.state.approval()?.children ?? {};
    for (const call of parent.state.currentStep()?.requestedToolCalls() ?? []) {
      const child = Object.hasOwn(waiting, call.id) ? waiting[call.id] : undefined;
      if (!child) continue;
      adopt(child, {
        parentId: parent.state.agentId(),
        stepNumber: parent.state.stepCount() + 1,
        toolName: call.name,
        toolCallId: call.id,
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
          adopt(child, {
            parentId: parent.state.agentId(),
            stepNumber: index + 1,
            toolName: execution.name(),
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
export function linkSpawningCalls(sources: AgentSource[]): void {
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
