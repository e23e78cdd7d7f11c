/**
 * A run's listener (`onEvent(event, source)`): every event of the run, the agent's and its
 * subagents', with where it comes from, known when each actor was spawned (no inspection).
 */
import type { AnyActorRef, Subscription } from 'xstate';
import type { EventSource, RunListener, SubagentOrigin } from '../state/event-source';
import type { AgentEvent } from '../state/loop-events';
import type { AgentActor } from './agent-actor';

/**
 * The listener of a run, by the run's actor system (subagents are spawned into their root's
 * system, so each one's events reach the listener the root was given, at any depth), and the
 * origin of each subagent actor of a listened run.
 */
const listeners = new WeakMap<object, RunListener>();
const origins = new WeakMap<AnyActorRef, SubagentOrigin>();

/** Sends every event of `actor`, and of the subagents it spawns, to `onEvent` with its source, until unsubscribed. */
export function listenToRun(actor: AgentActor, onEvent: RunListener): Subscription {
  listeners.set(actor.system, onEvent);
  return actor.on('*', (event) => onEvent(event as AgentEvent, sourceOf(actor, event as AgentEvent, null)));
}

/** Sends a just-spawned subagent's events to its run's `onEvent` (if the run has one), naming the call. */
export function forwardSubagentEvents(
  parent: AnyActorRef,
  child: AgentActor,
  call: { readonly name: string; readonly toolCallId: string },
): void {
  const onEvent = listeners.get(parent.system);
  if (!onEvent) return;
  const above = origins.get(parent)?.callPath ?? [];
  const origin: SubagentOrigin = {
    name: call.name,
    toolCallId: call.toolCallId,
    callPath: [...above, call.toolCallId],
  };
  origins.set(child, origin);
  child.on('*', (event) => onEvent(event as AgentEvent, sourceOf(child, event as AgentEvent, origin)));
}

/** XState emits after the snapshot is updated: the step read here is the one of the event. */
function sourceOf(actor: AgentActor, event: AgentEvent, subagent: SubagentOrigin | null): EventSource {
  const state = actor.getSnapshot().context.state;
  const step = !state ? null : event.type === 'step.finished' ? state.lastStep() : state.currentStep();
  return { step, subagent };
}
