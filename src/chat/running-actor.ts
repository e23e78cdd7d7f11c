import type { AgentState } from '../state/agent-state';
import type { Message } from '../state/message';
import type { UIMessageChunk } from '../ui/ui-message';
import { heldIds, holds } from './chat-message-id';

/** What the chat handler sends the run's agent actor. */
interface SteerTarget {
  send(event: { type: 'steer'; message: Message }): void;
}

/** A handle on a run: given the run's root actor as the run's start makes it (`runHandle` of its options). */
export interface RunHandle {
  attach(actor: SteerTarget): void;
}

/**
 * A chat's handle on its run: the run's start gives it the run's agent actor as it makes it (the
 * `runHandle` of the run's options), and the messages steered to the run go to that actor (held
 * until it exists). No inspection: a run that is inspected is observed, which costs every step.
 */
export interface RunningActor extends RunHandle {
  readonly steer: (message: Message) => void;
  /** The messages steered to the run that its final state holds neither in its conversation nor in its steering section. */
  readonly unapplied: (final: AgentState) => readonly Message[];
}

export function runningActor(): RunningActor {
  const run: { root: SteerTarget | null } = { root: null };
  const waiting: Message[] = [];
  const sent: Message[] = [];
  return {
    attach: (actor) => {
      if (run.root) return;
      run.root = actor;
      for (const message of waiting.splice(0)) actor.send({ type: 'steer', message });
    },
    steer: (message) => {
      sent.push(message);
      if (run.root) run.root.send({ type: 'steer', message });
      else waiting.push(message);
    },
    unapplied: (final) => {
      const held = heldIds(final);
      return sent.filter((message) => !holds(held, message));
    },
  };
}

/** An empty chunk stream. */
export async function* noChunks(): AsyncIterable<UIMessageChunk> {}
