import { AgentState } from '../state/agent-state';
import { Message } from '../state/message';
import type { ToolExecution } from '../state/tool-execution';

/** The tool message the model sees: the value as text (JSON for data), or the error. */
export function toolResultMessage(execution: ToolExecution): Message {
  const call = execution.toolCall();
  const error = execution.error();
  const content = error ? `Error: ${error.message}` : stringify(execution.value());
  return Message.of({
    role: 'tool',
    content,
    toolCallId: call.id,
    toolName: call.name,
    isError: error !== null,
    metadata: { tool_execution_id: execution.id() },
  });
}

function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value instanceof AgentState) return value.finalResponse();
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    return String(value);
  }
}
