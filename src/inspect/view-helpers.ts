/** Small helpers of the run viewer's data: text, JSON, usage and errors as shown. */
import type { AgentState } from '../state/agent-state';
import { Usage } from '../state/usage';
import type { ErrorView, UsageView } from './run-view';

const MAX_TEXT = 20_000;

export function pretty(value: unknown): string {
  if (typeof value === 'string') return truncate(value, MAX_TEXT);
  if (value === undefined) return '';
  return truncate(safeJson(value, 2), MAX_TEXT);
}

export function safeJson(value: unknown, indent?: number): string {
  try {
    return JSON.stringify(value, null, indent) ?? String(value);
  } catch (error) {
    return `[unserializable: ${(error as Error).message}]`;
  }
}

export function truncate(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length - max} more characters)`;
}

/** The state's usage without what its subagents spent (kept on the calls that ran them). */
export function ownUsage(state: AgentState): Usage {
  let usage = Usage.zero;
  for (const step of state.steps()) {
    usage = Usage.add(usage, step.inferenceResponse().usage);
    for (const execution of step.toolExecutions())
      if (execution.childState() === null) usage = Usage.add(usage, execution.usage());
  }
  return usage;
}

export function usageView(usage: Usage): UsageView {
  return {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    totalTokens: usage.totalTokens,
    cost: usage.cost,
  };
}

export function errorView(
  error: { name: string; message: string; code: string | null },
  stepNumber: number | null,
  toolName: string | null,
): ErrorView {
  return { name: error.name, message: error.message, code: error.code, stepNumber, toolName };
}

export function clamp(value: number, min: number, max: number): number {
  return Math.min(Math.max(value, min), Math.max(min, max));
}

export function shortId(id: string): string {
  return id.length > 8 ? id.slice(0, 8) : id;
}
