/** Running an agent actor to where it rests: its outcome, or a wait for decisions on tool calls. */
import { LoopTag } from '../../machines/agentLoop';
import type { AgentState } from '../state/agent-state';
import { AgentMachineError } from '../state/errors';
import type { AgentEvent } from '../state/loop-events';
import type { AgentActor, CreateActorOptions } from './agent-actor';
import { listenToRun } from './run-events';

/** An actor error the run could not record (a bug, or a hook returning something else). */
export class AgentRuntimeError extends AgentMachineError {
  constructor(
    message: string,
    readonly state: AgentState,
    options?: { cause?: unknown },
  ) {
    super('AGENT_RUNTIME', message, options);
  }
}

/** Options of the runtime's own actors: `reports: false` when no one can listen. */
export interface InternalActorOptions extends CreateActorOptions {
  readonly reports?: boolean;
}

/** Nobody can listen to an actor that execute() keeps to itself, unless it is inspected or onEvent is given. */
export function listened(options: { inspect?: unknown }, onEvent: unknown): InternalActorOptions {
  return {
    ...(options as CreateActorOptions),
    reports: options.inspect !== undefined || onEvent !== undefined,
  };
}

/** Starts the actor, sends `execute`, resolves with the state at its outcome, and stops the actor. */
export function runToOutcome(
  actor: AgentActor,
  signal: AbortSignal | undefined,
  onEvent?: (event: AgentEvent) => void,
): Promise<AgentState> {
  if (onEvent) listenToRun(actor, onEvent);
  const outcome = awaitOutcome(actor, signal);
  actor.start();
  return outcome.finally(() => actor.stop());
}

/**
 * Sends `execute` to a started (or about to start) agent actor and resolves with its state once it
 * reaches an outcome; aborting `signal` sends `stop`. An actor error rejects with AgentRuntimeError.
 */
export function awaitOutcome(actor: AgentActor, signal: AbortSignal | undefined): Promise<AgentState> {
  return new Promise<AgentState>((resolve, reject) => {
    let settled = false;
    const onAbort = () => actor.send({ type: 'stop', reason: abortReason(signal) });
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      subscription.unsubscribe();
      outcome();
    };
    const subscription = actor.subscribe({
      next: (snapshot) => {
        // the run rests: at an outcome, or waiting for decisions on tool calls
        if (snapshot.hasTag(LoopTag.outcome) || snapshot.hasTag(LoopTag.awaitingDecisions)) {
          finish(() => resolve(snapshot.context.state));
        }
      },
      error: (error) => {
        const state = actor.getSnapshot().context.state;
        const message = `The agent actor failed: ${(error as Error)?.message}`;
        finish(() => reject(new AgentRuntimeError(message, state, { cause: error })));
      },
    });
    actor.send({ type: 'execute' });
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortReason(signal: AbortSignal | undefined): string {
  const reason = signal?.reason;
  if (reason instanceof Error && reason.name !== 'AbortError') return reason.message;
  if (typeof reason === 'string' && reason) return reason;
  return 'Stopped by user request';
}
