import { AgentMachineError } from './errors';
import { asJsonValue, toJsonValue } from './json-value';
import type { AgentErrorJSON } from './schemas';

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
  /** A recorded error; `details` are kept as their JSON form (see `toJsonValue`), so they always load. */
  of(
    name: string,
    message: string,
    code: string | null = null,
    details: Record<string, unknown> | null = null,
  ) {
    const kept = details === null ? null : asJsonValue(details, `The details of error '${name}'`);
    const record =
      typeof kept === 'object' && kept !== null && !Array.isArray(kept) ? Object.freeze(kept) : null;
    return Object.freeze({ name, message, code, details: record }) as AgentError;
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
  /**
   * Turns anything thrown into a record, keeping its class name, code and message. Whatever was
   * thrown (a string, an object with odd fields, a getter that throws, details JSON cannot hold)
   * gives a record that saves and loads: fields that cannot be read or kept are left out.
   */
  from(thrown: unknown): AgentError {
    try {
      return recordOf(thrown);
    } catch (error) {
      // A proxy whose traps throw: what it was cannot be read, that it failed is still recorded.
      return AgentError.of('Error', `A thrown value that could not be read: ${safeString(error)}`);
    }
  },
};

/** An error of a validated document, frozen as the state holds it (its details are JSON already). */
export function decodeAgentError(json: AgentErrorJSON): AgentError {
  return Object.freeze({ ...json, details: json.details === null ? null : Object.freeze(json.details) });
}

function recordOf(thrown: unknown): AgentError {
  if (typeof thrown !== 'object' || thrown === null) {
    return AgentError.of('Error', typeof thrown === 'string' && thrown !== '' ? thrown : notAnError(thrown));
  }
  const read = (key: string): unknown => {
    try {
      return (thrown as Record<string, unknown>)[key];
    } catch {
      return undefined;
    }
  };
  const isError = thrown instanceof Error;
  const rawName = read('name');
  const rawMessage = read('message');
  const name = typeof rawName === 'string' && rawName !== '' ? rawName : 'Error';
  let message: string;
  if (typeof rawMessage === 'string') message = rawMessage;
  else if (rawMessage !== undefined) message = safeString(rawMessage);
  else if (isError) message = `${name} (its message could not be read)`;
  else message = notAnError(thrown);
  const code = codeOf(thrown instanceof AgentMachineError ? thrown.code : read('code'));
  let details: Record<string, unknown> | null = null;
  if (!isError && 'details' in thrown) details = detailsOf(read('details'));
  else if (isError) {
    const statusCode = read('statusCode');
    details = typeof statusCode === 'number' && Number.isFinite(statusCode) ? { statusCode } : null;
  }
  return AgentError.of(name, message, code, details);
}

/** A code as text: strings as they are, finite numbers (HTTP libraries use them) as digits. */
function codeOf(value: unknown): string | null {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return null;
}

/** Details that JSON can hold, or null (a record whose details cannot be saved keeps its message). */
function detailsOf(value: unknown): Record<string, unknown> | null {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return null;
  try {
    return toJsonValue(value) as Record<string, unknown>;
  } catch {
    return { unsavedDetails: 'the thrown details could not be saved (too deep, a cycle or unreadable)' };
  }
}

/** The longest text of a thrown non-Error kept as its message. */
const SHOWN_LENGTH = 500;

/** The message of a thrown value that is not an Error and has no message: what it was, said so. */
function notAnError(value: unknown): string {
  const text = safeString(value);
  return `${text.length > SHOWN_LENGTH ? `${text.slice(0, SHOWN_LENGTH)}…` : text} was thrown, not an Error`;
}

function safeString(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    try {
      return String(value);
    } catch {
      return `a thrown ${typeof value} that cannot be shown as text`;
    }
  }
}
