import { AgentState } from '../state/agent-state';
import { InvalidArgumentError } from '../state/errors';

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
      `${String(version)} is not null (create) or a positive integer (the version last loaded or saved)`,
    );
}
