import { AgentState } from '../state/agent-state';
import { InvalidArgumentError, shownValue } from '../state/errors';

/** Refuses anything but an AgentState, before a store writes a document no load could read. */
export function assertState(state: unknown): asserts state is AgentState {
  if (!(state instanceof AgentState))
    throw new InvalidArgumentError(
      'state',
      'expected an AgentState (e.g. the state agent.execute() resolved with)',
    );
}

/** `null` (create) or the positive integer version last loaded or saved. */
export function assertExpectedVersion(version: unknown): asserts version is number | null {
  if (version === null) return;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < 1)
    throw new InvalidArgumentError(
      'expectedVersion',
      `${shownValue(version)} is not null (create) or a positive integer (the version last loaded or saved)`,
    );
}

/**
 * The path a store was given, checked at construction: a non-empty string without NUL bytes. An
 * unset environment variable (`undefined`) or `''` would otherwise fail at the first save, or (SQLite)
 * open a temporary database deleted at close.
 */
export function assertStorePath(argument: string, path: unknown, empty: string): string {
  if (typeof path !== 'string' || path === '' || path.includes('\0'))
    throw new InvalidArgumentError(
      argument,
      `expected a path, got ${shownValue(path)}${path === '' ? ` (${empty})` : ''}`,
    );
  return path;
}
