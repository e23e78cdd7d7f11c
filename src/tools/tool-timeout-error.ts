import { AgentMachineError } from '../state/errors';

export class ToolTimeoutError extends AgentMachineError {
  static override get name(): string {
    return 'ToolTimeoutError';
  }

  declare readonly code: 'TOOL_TIMEOUT';
  constructor(toolName: string, timeoutMs: number) {
    super('TOOL_TIMEOUT', `Tool '${toolName}' timed out after ${timeoutMs} ms`);
  }
}
