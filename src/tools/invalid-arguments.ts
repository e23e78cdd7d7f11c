import { AgentError } from '../state/agent-error';
import type { ToolCall } from '../state/message';

/**
 * The error for arguments that failed validation. Drivers keep arguments that are not valid JSON
 * as their raw text; the schema's complaint about that ("expected object, received string") would
 * not tell the model what to fix, so such arguments get an error saying they are not valid JSON.
 */
export function invalidArguments(call: ToolCall, issues: readonly string[]): AgentError {
  const syntaxError = typeof call.args === 'string' ? jsonSyntaxError(call.args) : null;
  if (syntaxError === null) {
    return AgentError.of(
      'ToolArgumentsInvalid',
      `Invalid arguments for tool '${call.name}': ${issues.join('; ')}`,
      'INVALID_TOOL_ARGUMENTS',
      { issues },
    );
  }
  const text = call.args as string;
  const shown = text.length > 200 ? `${text.slice(0, 200)}...` : text;
  return AgentError.of(
    'ToolArgumentsInvalid',
    `Invalid arguments for tool '${call.name}': the arguments are not valid JSON (${syntaxError}). ` +
      `Send them as one JSON object that matches the tool's input schema. Received: ${shown}`,
    'INVALID_TOOL_ARGUMENTS',
    { issues: [`not valid JSON: ${syntaxError}`], invalidJson: true, rawArguments: text },
  );
}

/** JSON.parse's complaint about `text`, or null when it parses. */
function jsonSyntaxError(text: string): string | null {
  try {
    JSON.parse(text);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}
