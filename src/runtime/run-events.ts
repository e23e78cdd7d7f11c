import type { AnyActorRef } from 'xstate';
import type { AgentEvent } from '../state/loop-events';

/**
 * The `onEvent` listener of a run, by the run's actor system: subagents are spawned into their
 * root's system, so each one's events reach the listener the root was given, at any depth.
 */
const listeners = new WeakMap<object, (event: AgentEvent) => void>();

/** Sends every event of `actor`, and of the subagents it spawns, to `onEvent`. */
export function listenToRun(actor: AnyActorRef, onEvent: (event: AgentEvent) => void): void {
  actor.on('*', (event) => onEvent(event as AgentEvent));
  listeners.set(actor.system, onEvent);
}

/** Sends a just-spawned subagent's events to its run's `onEvent`, if the run has one. */
export function forwardSubagentEvents(parent: AnyActorRef, child: AnyActorRef): void {
  const onEvent = listeners.get(parent.system);
  if (onEvent) child.on('*', (event) => onEvent(event as AgentEvent));
}
