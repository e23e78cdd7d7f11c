import { AgentError } from '../state/agent-error';
import type { AgentState } from '../state/agent-state';
import type { AgentStep } from '../state/agent-step';
import type { SubagentOrigin } from '../state/event-source';
import type { AgentEvent } from '../state/loop-events';
import { approvalRequestChunks, chatToolCallId } from './approval-chunks';
import type { UIFinishReason, UIMessageChunk } from './ui-message';

/** One event of a run as an AgentStream records it. */
export interface RunEntry {
  readonly event: AgentEvent;
  /**
   * The agent's step at the moment of the event (in flight, or just recorded at `step.finished`),
   * read when the event happened: the chunks of a step's text and tool calls come from it.
   */
  readonly step: AgentStep | null;
  /** Set for the events of a subagent: its name and the tool call that started it. */
  readonly subagent: SubagentOrigin | null;
}

export type { SubagentOrigin };

/** How a run ended: its final state (or the state waiting for approval), or what it threw. */
export type RunOutcome = { readonly state: AgentState } | { readonly error: unknown };

export interface UIMessageStreamOptions {
  /**
   * The text of the `error` chunk sent when a run fails. The default names the stop reason (or
   * the error's code) and nothing else: error messages may carry provider or server details a
   * browser should not see. Return `error.message` to show them.
   */
  readonly errorText?: (error: AgentError) => string;
}

/** A stream that goes on with an assistant message the client already holds (after approvals). */
export interface UIStreamContinuation {
  /** The id of that message: the execution's id. */
  readonly messageId: string;
  /**
   * The tool calls of the step that awaited approval, and the calls inside its subagents that
   * awaited approval (`p1/t1`): the client has their inputs already.
   */
  readonly toolCallIds: readonly string[];
  /** Calls a person rejected (their chat tool call ids): they end as `tool-output-denied`. */
  readonly denied: ReadonlySet<string>;
}

/** A subagent's progress, sent as a `data-subagent` part (one part per subagent, updated in place). */
export interface SubagentProgress {
  readonly name: string;
  readonly toolCallId: string;
  readonly agentId: string;
  readonly parentAgentId: string | null;
  /** `running`, then the subagent's ExecutionStatus when it ends. */
  readonly status: string;
  readonly steps: number;
  readonly lastTool: string | null;
}

/**
 * Maps a run's events, in order, to UI message stream chunks: one assistant message per
 * execution (its id is the execution id), `start-step`/`finish-step` per step, text as it streams
 * (or whole when the model did not stream), each tool call's input once the model asked for it and
 * its output as soon as it finished, approval requests, subagent progress as data parts, and a
 * `finish` (after an `error` chunk when the run failed).
 */
export function createUIChunkMapper(
  options: UIMessageStreamOptions = {},
  continuation?: UIStreamContinuation,
) {
  // By default the text names only the stop reason or the error's code.
  const errorText = (error: AgentError, stopReason?: string | null) =>
    options.errorText
      ? options.errorText(error)
      : `The agent could not answer (${stopReason ?? error.code ?? error.name}).`;
  let started = false;
  let stepOpen = false;
  let stepNumber = 0;
  let textId: string | null = null;
  let textStreamed = false;
  // The text and inputs of the step in flight went out (at its first tool or approval event).
  let stepAnnounced = continuation !== undefined;
  const announced = new Set<string>(continuation?.toolCallIds ?? []);
  const denied = continuation?.denied ?? new Set<string>();
  const subagents = new Map<string, SubagentProgress>();

  const start = (out: UIMessageChunk[], executionId?: string) => {
    if (started) return;
    started = true;
    const messageId = continuation?.messageId ?? executionId;
    out.push(messageId ? { type: 'start', messageId } : { type: 'start' });
  };
  const closeText = (out: UIMessageChunk[]) => {
    if (textId === null) return;
    out.push({ type: 'text-end', id: textId });
    textId = null;
  };
  /** The step's text (unless it streamed) and the inputs of its tool calls, once. */
  const announce = (out: UIMessageChunk[], step: AgentStep | null) => {
    if (stepAnnounced || step === null) return;
    stepAnnounced = true;
    closeText(out);
    const text = step.outputText();
    if (!textStreamed && text !== '') {
      const id = `${step.id()}:text`;
      out.push({ type: 'text-start', id }, { type: 'text-delta', id, delta: text }, { type: 'text-end', id });
    }
    for (const call of step.requestedToolCalls()) {
      if (announced.has(call.id)) continue;
      announced.add(call.id);
      out.push({ type: 'tool-input-available', toolCallId: call.id, toolName: call.name, input: call.args });
    }
  };
  const toolOutput = (
    out: UIMessageChunk[],
    event: Extract<AgentEvent, { type: 'tool.finished' }>,
    toolCallId: string,
  ) => {
    if (!announced.has(toolCallId)) return;
    if (denied.has(toolCallId)) out.push({ type: 'tool-output-denied', toolCallId });
    else if (event.error) out.push({ type: 'tool-output-error', toolCallId, errorText: event.error.message });
    else out.push({ type: 'tool-output-available', toolCallId, output: event.value });
  };
  const progress = (out: UIMessageChunk[], event: AgentEvent, origin: SubagentOrigin) => {
    const before = subagents.get(event.agentId) ?? {
      name: origin.name,
      toolCallId: origin.toolCallId,
      agentId: event.agentId,
      parentAgentId: event.parentAgentId,
      status: 'running',
      steps: 0,
      lastTool: null,
    };
    let after: SubagentProgress;
    switch (event.type) {
      case 'step.finished':
        after = { ...before, steps: event.stepNumber };
        break;
      case 'tool.started':
        after = { ...before, lastTool: event.toolName };
        break;
      case 'execution.finished':
        after = { ...before, status: event.status, steps: event.stepCount };
        break;
      case 'execution.started':
        after = before;
        break;
      default:
        return;
    }
    subagents.set(event.agentId, after);
    out.push({ type: 'data-subagent', id: event.agentId, data: after });
  };

  return {
    /** The chunks one event of the run adds. */
    map(entry: RunEntry): UIMessageChunk[] {
      const out: UIMessageChunk[] = [];
      const { event, step } = entry;
      start(out, event.executionId);
      if (entry.subagent) {
        progress(out, event, entry.subagent);
        // a call inside a subagent that awaited approval has a part of its own (`p1/t1`)
        const { callPath } = entry.subagent;
        if (event.type === 'tool.finished' && callPath)
          toolOutput(out, event, [...callPath, event.toolCallId].join('/'));
        return out;
      }
      switch (event.type) {
        case 'step.started':
          if (stepOpen) out.push({ type: 'finish-step' });
          out.push({ type: 'start-step' });
          stepOpen = true;
          stepNumber = event.stepNumber;
          stepAnnounced = false;
          textStreamed = false;
          break;
        case 'text.delta':
          if (event.stepNumber !== stepNumber || stepAnnounced) break;
          if (textId === null) {
            textId = `${event.executionId}:${event.stepNumber}:text`;
            out.push({ type: 'text-start', id: textId });
          }
          textStreamed = true;
          out.push({ type: 'text-delta', id: textId, delta: event.delta });
          break;
        case 'tool.started':
          announce(out, step);
          break;
        case 'approval.requested':
          announce(out, step);
          for (const call of event.toolCalls) {
            announced.add(chatToolCallId(call));
            out.push(...approvalRequestChunks(call));
          }
          break;
        case 'tool.finished':
          announce(out, step);
          toolOutput(out, event, event.toolCallId);
          break;
        case 'step.finished':
          announce(out, step);
          closeText(out);
          if (stepOpen) out.push({ type: 'finish-step' });
          stepOpen = false;
          break;
        case 'error':
          closeText(out);
          break;
        default:
          break;
      }
      return out;
    },

    /** The chunks that end the message: an open step closed, an `error` for a failed run, `finish`. */
    end(outcome: RunOutcome): UIMessageChunk[] {
      const out: UIMessageChunk[] = [];
      start(out, 'state' in outcome ? (outcome.state.executionId() ?? undefined) : undefined);
      closeText(out);
      if (stepOpen) out.push({ type: 'finish-step' });
      stepOpen = false;
      if (!('state' in outcome)) {
        out.push({ type: 'error', errorText: errorText(AgentError.from(outcome.error)) });
        out.push({ type: 'finish', finishReason: 'error' });
        return out;
      }
      const { state } = outcome;
      const metadata = { status: state.status(), stopReason: state.stopReason(), usage: state.usage() };
      if (state.status() === 'failed') {
        const last = state.errors().at(-1);
        const error = last ?? { name: 'Error', message: '', code: state.stopReason(), details: null };
        out.push({ type: 'error', errorText: errorText(error, state.stopReason()) });
      }
      out.push({ type: 'finish', finishReason: finishReason(state), messageMetadata: metadata });
      return out;
    },
  };
}

function finishReason(state: AgentState): UIFinishReason {
  if (state.approval() !== null && state.status() === 'in_progress') return 'tool-calls';
  switch (state.status()) {
    case 'completed':
      return 'stop';
    case 'failed':
      return 'error';
    default:
      return 'other';
  }
}
