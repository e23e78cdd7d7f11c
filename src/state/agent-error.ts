import { AgentMachineError } from './errors';

/**
 * An error as recorded in the state: plain data that survives serialization. `name` is the class
 * of the original error (`ToolExecutionBlocked`, `ToolArgumentsInvalid`, `APICallError`, ...).
 */
export interface AgentError {
  readonly name: string;
  readonly message: string;
  readonly code: string | null;
  readonly details: Readonly<Record<string, unknown>> | null;
}

export const AgentError = {
  of(
    name: string,
    message: string,
    code: string | null = null,
    details: Record<string, unknown> | null = null,
  ) {
    return Object.freeze({ name, message, code, details }) as AgentError;
  },
  /** True for a recorded error (plain data), false for an Error instance or anything else. */
  is(value: unknown): value is AgentError {
    return (
      typeof value === 'object' &&
      value !== null &&
      !(value instanceof Error) &&
      typeof (value as AgentError).name === 'string' &&
      typeof (value as AgentError).message === 'string' &&
      'code' in value &&
      'details' in value
    );
  },
  /** Turns anything thrown into a record, keeping its class name, code and message. */
  from(thrown: unknown): AgentError {
    if (AgentError.is(thrown)) return thrown;
    if (thrown instanceof Error) {
      const rawCode = (thrown as Error & { code?: unknown }).code;
      const code =
        thrown instanceof AgentMachineError ? thrown.code : typeof rawCode === 'string' ? rawCode : null;
      const statusCode = (thrown as { statusCode?: unknown }).statusCode;
      const details = typeof statusCode === 'number' ? { statusCode } : null;
      return AgentError.of(thrown.name || 'Error', thrown.message, code, details);
    }
    return AgentError.of('Error', typeof thrown === 'string' ? thrown : safeString(thrown));
  },
};

function safeString(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
