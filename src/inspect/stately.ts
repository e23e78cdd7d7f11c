/**
 * Helpers for watching an agent in the Stately inspector (`@statelyai/inspect`, the XState v5
 * inspector; `@xstate/inspect` supports XState v4 only). Nothing here imports that package: these
 * are options to pass to its `createWebSocketInspector` / `createBrowserInspector` /
 * `createInspector`, and a way to give one actor several inspection observers.
 */
import type { InspectionEvent, Observer } from 'xstate';
import { AgentState } from '../state/agent-state';
import { type StopReason, stopReasonPriority, stopReasons } from '../state/stop-reason';
import { hideContent } from './hidden-content';

/**
 * What an inspector shows of an AgentState: identity, status, progress, usage; no conversation,
 * system prompt, llmConfig, tool argument or result.
 */
export interface AgentStateSummary {
  readonly agentId: string;
  readonly parentAgentId: string | null;
  readonly status: string;
  readonly stopReason: string | null;
  readonly executionId: string | null;
  readonly executionCount: number;
  readonly stepCount: number;
  readonly lastStepType: string | null;
  readonly lastToolCalls: readonly string[];
  /** The last step's errors as `Name (CODE)`: their messages may quote arguments or results. */
  readonly lastStepErrors: readonly string[];
  readonly messageCount: number;
  readonly usage: { inputTokens: number; outputTokens: number; totalTokens: number; cost: number };
  /** The length of the final answer (0 when there is none); the answer itself is conversation. */
  readonly finalResponseLength: number;
  /**
   * The calls the run waits for decisions on, its subagents' included, as
   * `[subagent/...]tool callId` (`payer/transfer t1`); empty when it waits for none.
   */
  readonly pendingApprovals: readonly string[];
}

/**
 * A compact, JSON-ready view of an AgentState (or of its `toJSON()`, read tolerantly: an
 * inspector may have cut deep parts) for an inspector's context panel. Reading it costs O(1)
 * for a state and O(steps) for its JSON.
 *
 * @example
 * summarizeAgentState(state); // { agentId, status: 'completed', stepCount: 3, usage, ... }
 */
export function summarizeAgentState(state: AgentState | Record<string, unknown>): AgentStateSummary {
  if (!(state instanceof AgentState)) return summarizeJson(state);
  const last = state.lastStep();
  return {
    agentId: state.agentId(),
    parentAgentId: state.parentAgentId(),
    status: state.status(),
    stopReason: state.stopReason(),
    executionId: state.executionId(),
    executionCount: state.executionCount(),
    stepCount: state.stepCount(),
    lastStepType: state.lastStepType(),
    lastToolCalls: last?.requestedToolCalls().map((c) => c.name) ?? [],
    lastStepErrors: last?.errors().map(errorLabel) ?? [],
    messageCount: state.messageList().size,
    usage: { ...state.usage() },
    finalResponseLength: state.finalResponse().length,
    pendingApprovals: state
      .pendingApprovals()
      .map((p) => pendingLabel(p.path ?? [], p.toolName, p.toolCallId)),
  };
}

function pendingLabel(path: readonly string[], toolName: string, toolCallId: string): string {
  return `${path.map((name) => `${name}/`).join('')}${toolName} ${toolCallId}`;
}

/** The pending calls of a state's JSON (read tolerantly), its waiting children's included. */
function pendingOfJson(execution: Record<string, unknown> | null, path: readonly string[]): string[] {
  const waiting = execution && isRecord(execution.awaitingApproval) ? execution.awaitingApproval : null;
  if (!waiting) return [];
  const step = isRecord(waiting.step) ? waiting.step : {};
  const response = isRecord(step.inferenceResponse) ? step.inferenceResponse : {};
  const calls = (Array.isArray(response.toolCalls) ? response.toolCalls : []).filter(isRecord);
  const own = Array.isArray(waiting.toolCallIds) ? waiting.toolCallIds : [];
  const decided = isRecord(waiting.decisions) ? waiting.decisions : {};
  const children = isRecord(waiting.children) ? waiting.children : {};
  return calls.flatMap((call) => {
    const id = String(call.id);
    const name = String(call.name);
    const mine = own.includes(id) && !Object.hasOwn(decided, id) ? [pendingLabel(path, name, id)] : [];
    const child = Object.hasOwn(children, id) ? children[id] : null;
    const childExecution = isRecord(child) && isRecord(child.execution) ? child.execution : null;
    return [...mine, ...pendingOfJson(childExecution, [...path, name])];
  });
}

/** True for an AgentState's `toJSON()` shape (as an inspector serializes the context). */
function looksLikeStateJson(value: unknown): value is Record<string, unknown> {
  return (
    isRecord(value) &&
    typeof value.agentId === 'string' &&
    'formatVersion' in value &&
    'context' in value &&
    'execution' in value
  );
}

function summarizeJson(json: Record<string, unknown>): AgentStateSummary {
  const execution = isRecord(json.execution) ? json.execution : null;
  const steps = execution && Array.isArray(execution.stepExecutions) ? execution.stepExecutions : [];
  const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0, cost: 0 };
  const addUsage = (u: unknown) => {
    if (!isRecord(u)) return;
    for (const key of Object.keys(usage) as Array<keyof typeof usage>)
      if (typeof u[key] === 'number') usage[key] += u[key] as number;
  };
  const stepOf = (item: unknown) => (isRecord(item) && isRecord(item.step) ? item.step : {});
  for (const item of steps) {
    const step = stepOf(item);
    addUsage(isRecord(step.inferenceResponse) ? step.inferenceResponse.usage : null);
    if (Array.isArray(step.toolExecutions))
      for (const t of step.toolExecutions) addUsage(isRecord(t) ? t.usage : null);
  }
  const last = steps.length ? stepOf(steps[steps.length - 1]) : null;
  const response = last && isRecord(last.inferenceResponse) ? last.inferenceResponse : {};
  const toolCalls = Array.isArray(response.toolCalls) ? response.toolCalls : [];
  const errorText = (e: unknown) =>
    isRecord(e)
      ? errorLabel({ name: String(e.name), code: typeof e.code === 'string' ? e.code : null })
      : 'Error';
  const lastStepErrors = last
    ? [
        ...(Array.isArray(last.errors) ? last.errors.map(errorText) : []),
        ...(Array.isArray(last.toolExecutions)
          ? last.toolExecutions.flatMap((t) => (isRecord(t) && t.error ? [errorText(t.error)] : []))
          : []),
      ]
    : [];
  const lastStepType = !last
    ? null
    : lastStepErrors.length
      ? 'error'
      : toolCalls.length
        ? 'tool_execution'
        : 'final_response';
  const status = typeof execution?.status === 'string' ? execution.status : 'pending';
  const continuation = execution && isRecord(execution.continuation) ? execution.continuation : {};
  const signals = Array.isArray(continuation.stopSignals) ? continuation.stopSignals : [];
  let stopReason: string | null = null;
  for (const signal of signals) {
    const reason = isRecord(signal) ? signal.reason : null;
    if (typeof reason !== 'string' || !(stopReasons as readonly string[]).includes(reason)) continue;
    if (
      stopReason === null ||
      stopReasonPriority(reason as StopReason) < stopReasonPriority(stopReason as StopReason)
    )
      stopReason = reason;
  }
  if (stopReason === null && status === 'completed') stopReason = 'completed';
  const context = isRecord(json.context) ? json.context : {};
  const messages = isRecord(context.messages) ? context.messages.messages : null;
  const text = typeof response.text === 'string' ? response.text : '';
  return {
    agentId: String(json.agentId),
    parentAgentId: typeof json.parentAgentId === 'string' ? json.parentAgentId : null,
    status,
    stopReason,
    executionId: typeof execution?.executionId === 'string' ? execution.executionId : null,
    executionCount: typeof json.executionCount === 'number' ? json.executionCount : 0,
    stepCount: steps.length,
    lastStepType,
    lastToolCalls: toolCalls.map((c) => (isRecord(c) ? String(c.name) : '?')),
    lastStepErrors,
    messageCount: Array.isArray(messages) ? messages.length : 0,
    usage,
    finalResponseLength: lastStepType === 'final_response' ? text.length : 0,
    pendingApprovals: pendingOfJson(execution, []),
  };
}

const errorLabel = (error: { name: string; code: string | null }) =>
  error.code ? `${error.name} (${error.code})` : error.name;

const summarize = (value: unknown): AgentStateSummary | null =>
  value instanceof AgentState
    ? summarizeAgentState(value)
    : looksLikeStateJson(value)
      ? summarizeJson(value)
      : null;

/**
 * `sanitizeContext` for `@statelyai/inspect`: shows the AgentState in the machine's context as a
 * summary (status, steps, usage, last errors, ...) and hides every other text but identifiers and
 * names (see `hideContent`), so the inspector sees no conversation, system prompt, llmConfig, tool
 * argument or result. The inspector serializes snapshots before sanitizing, so both a state and its
 * JSON are summarized.
 *
 * @example
 * const inspector = createWebSocketInspector({ url, sanitizeContext: sanitizeAgentContext, sanitizeEvent: sanitizeAgentEvent });
 */
export function sanitizeAgentContext(context: unknown): Record<string, unknown> {
  if (!isRecord(context)) return {};
  return hideContent(context, 'context', summarize) as Record<string, unknown>;
}

/**
 * `sanitizeEvent` for `@statelyai/inspect`: the states an event carries (a `work` request's state and
 * token, a worker's answer, an actor's input) are summarized, and its other text but identifiers and
 * names is hidden: a user message, a text delta, a tool call's arguments, an error's message.
 *
 * @example
 * createInspector(adapter, { sanitizeEvent: sanitizeAgentEvent });
 */
export function sanitizeAgentEvent<E extends { type: string }>(event: E): E {
  return hideContent(event, 'event', summarize) as E;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

type InspectObserver = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/**
 * One `inspect` option from several: each observer gets every inspection event, in order.
 *
 * @example
 * const recorder = recordTrace();
 * const stately = createWebSocketInspector({ url: 'ws://localhost:8080' });
 * agent.createActor(state, { inspect: combineInspectors(recorder.inspect, stately.inspect) });
 */
export function combineInspectors(...observers: ReadonlyArray<InspectObserver | undefined>) {
  const list = observers.filter((o): o is InspectObserver => o !== undefined);
  return (event: InspectionEvent): void => {
    for (const observer of list) {
      if (typeof observer === 'function') observer(event);
      else observer.next?.(event);
    }
  };
}
