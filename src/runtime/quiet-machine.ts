/**
 * The chart for a run no one can listen to (`LoopInput.reports` false: `execute()` without `onEvent`
 * or an inspector): the events a run emits at every step are not built. Each `emit` costs XState an
 * event built from the state, an action object, two closures and an inspection event, though an actor
 * no one holds has no listener to give the event to (#38).
 */
import type { agentLoop } from '../../machines/agentLoop';

/** The chart's actions that only emit, at every execution or step. */
const EMITTED_EACH_STEP = [
  'emitExecutionStarted',
  'emitStepStarted',
  'emitStepFinished',
  'emitContinuationEvaluated',
  'emitExecutionFinished',
] as const;

/**
 * Does nothing. XState resolves an action that has `resolve` (its own built-in actions: `assign`,
 * `emit`, ...) and executes it only if it also has `execute`: this one is resolved to the snapshot
 * as it was, never executed. An XState that stopped resolving it would call it as a plain action,
 * which does nothing too.
 */
const unheard = Object.assign(() => {}, {
  resolve: (_actorScope: unknown, snapshot: unknown) => [snapshot, undefined, undefined],
});

/** `machine` with the emitting actions of every step resolved to nothing. */
export function quietMachine(machine: typeof agentLoop): typeof agentLoop {
  return machine.provide({
    actions: Object.fromEntries(EMITTED_EACH_STEP.map((name) => [name, unheard])),
  });
}
