/**
 * What the chart names but only the runtime can carry out: its workers (actors), the runtime's
 * actions (`keepSettledToolCalls`, `spawnSubagent`) and guard (`startsUnsafeCalls`). The chart
 * alone has them as implementations that throw `NotProvidedError` when a run reaches them;
 * `createAgent()` provides every one (src/runtime/loop-actors.ts).
 */
import { AgentMachineError } from '../src/state/errors';

export type ImplementationKind = 'actor' | 'action' | 'guard';

/** A run of the agent machine reached an actor, action or guard it was not given. */
export class NotProvidedError extends AgentMachineError {
  static override get name(): string {
    return 'NotProvidedError';
  }

  constructor(
    readonly kind: ImplementationKind,
    readonly implementation: string,
  ) {
    super(
      'NOT_PROVIDED',
      `The '${implementation}' ${kind} of the agent machine is not provided: create the agent with createAgent(), or give it with agentLoop.provide({ ${kind}s: { ${implementation} } })`,
    );
  }
}

/** An implementation that throws `NotProvidedError` naming itself, in place of the runtime's. */
export const notProvided = (kind: ImplementationKind, implementation: string) => (): never => {
  throw new NotProvidedError(kind, implementation);
};
