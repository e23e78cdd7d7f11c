/**
 * The charts of runs no one inspects. The chart for a run no one can listen to (`LoopInput.reports` false: `execute()` without `onEvent`
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

/** What an action's `resolve` is given of the actor (XState 5's `actorScope`). */
interface EmitScope {
  readonly self: { readonly _processingStatus?: unknown };
  defer(effect: () => void): void;
  emit(event: unknown): void;
  actionExecutor(action: { type: string; info: unknown; params: unknown; exec: () => void }): void;
}

/** XState's `emit(expression)`: the expression is its `event`. */
type EmitAction = { readonly type?: unknown; readonly event?: unknown };
type EventExpression = (args: unknown, params: unknown) => unknown;

/** XState 5's `ProcessingStatus.Running`: an actor that runs what its actions do at once. */
const RUNNING = 1;

/**
 * `emit(expression)` as the machine of a listened run takes it: the event is built once and its
 * delivery deferred to after the snapshot, as XState's `emit` does, without the action object,
 * bound executor and inspection event XState's makes for an inspector this run has not (#50).
 * Before the actor runs (its initial state), XState's own way: the delivery queued behind the
 * actions queued before it.
 */
function heard(expression: EventExpression) {
  return Object.assign(() => {}, {
    resolve: (scope: EmitScope, snapshot: unknown, args: unknown, params: unknown) => {
      const event = expression(args, params);
      if (scope.self._processingStatus === RUNNING) scope.defer(() => scope.emit(event));
      else
        scope.actionExecutor({
          type: 'xstate.emit',
          info: args,
          params: { event },
          exec: () => scope.defer(() => scope.emit(event)),
        });
      return [snapshot, undefined, undefined];
    },
  });
}

/**
 * `machine` for a run someone listens to and no one inspects: the emitting actions of every step
 * deliver their events as XState's `emit` would, at less cost. An action that is not XState's
 * `emit` (an XState that changed it) is kept as it is.
 */
export function listenedMachine(machine: typeof agentLoop): typeof agentLoop {
  const actions = machine.implementations.actions as Record<string, EmitAction | undefined>;
  const provided: Record<string, unknown> = {};
  for (const name of EMITTED_EACH_STEP) {
    const action = actions[name];
    if (action?.type === 'xstate.emit' && typeof action.event === 'function')
      provided[name] = heard(action.event as EventExpression);
  }
  return machine.provide({ actions: provided });
}
