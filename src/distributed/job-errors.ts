/** What a job's error makes of it in BullMQ: retried, failed for good, or BullMQ's own signal. */
import { AgentMachineError } from '../state/errors';
import { failureReason } from './agent-job';
import type { BullMQModule } from './redis-modules';

/** Errors that a retry may get past; any other AgentMachineError fails the job at once. */
const RETRYABLE_CODES = new Set(['SESSION_CONFLICT', 'SESSION_LOCK_LOST', 'STORE_CLOSED']);

/**
 * What BullMQ is given when a job throws: its own signals unchanged; typed input errors as
 * UnrecoverableError (no retry); anything else as a retryable error. The message is always
 * `<ErrorName> [<CODE>]: <message>`, so the client can read the failure from failedReason.
 */
export function jobError(bull: BullMQModule, error: unknown): unknown {
  if (bullSignal(bull, error)) return error;
  const reason = failureReason(error);
  const wrapped = unrecoverable(error)
    ? new bull.UnrecoverableError(reason)
    : new Error(reason, { cause: error });
  if (error instanceof Error && error.stack)
    wrapped.stack = `${reason}\n${error.stack.split('\n').slice(1).join('\n')}`;
  return wrapped;
}

/** BullMQ's own signals (a job moved to delayed or waiting), thrown through unchanged. */
export function bullSignal(bull: BullMQModule, error: unknown): boolean {
  return error instanceof bull.DelayedError || error instanceof bull.WaitingError;
}

/** A typed input error: the job fails for good (no retry). */
export function unrecoverable(error: unknown): boolean {
  return error instanceof AgentMachineError && !RETRYABLE_CODES.has(error.code);
}
