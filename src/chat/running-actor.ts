import type { InspectionEvent } from 'xstate';
import type { AgentState } from '../state/agent-state';
import type { Message } from '../state/message';
import type { UIMessageChunk } from '../ui/ui-message';

/**
 * The metadata key of a message steered (or queued) into a chat's run: its id, by which a worker
 * that takes the run over tells the messages the session holds already from those still to apply,
 * and by which the stream store's hand-off list (`handOffId`) is settled. The in-process handler
 * uses the same key.
 */
export const STEER_ID = 'steerId';

/** What the chat handler sends the run's agent actor. */
interface SteerTarget {
  send(event: { type: 'steer'; message: Message }): void;
}

/** The run's agent actor, once it exists, and the messages steered to it (held until it does). */
export interface RunningActor {
  readonly inspect: (event: InspectionEvent) => void;
  readonly steer: (message: Message) => void;
  /** The messages steered to the run that its final state holds neither in its conversation nor in its steering section. */
  readonly unapplied: (final: AgentState) => readonly Message[];
}

export function runningActor(): RunningActor {
  const run: { root: SteerTarget | null } = { root: null };
  const waiting: Message[] = [];
  const sent: Message[] = [];
  return {
    inspect: (event) => {
      if (run.root || event.type !== '@xstate.actor' || event.actorRef.sessionId !== event.rootId) return;
      const actor = event.actorRef as unknown as SteerTarget;
      run.root = actor;
      for (const message of waiting.splice(0)) actor.send({ type: 'steer', message });
    },
    steer: (message) => {
      sent.push(message);
      if (run.root) run.root.send({ type: 'steer', message });
      else waiting.push(message);
    },
    unapplied: (final) => {
      // the run keeps a steered message as a copy (marked `steered`): told apart by its steer id
      const held = new Set<unknown>();
      for (const message of [...final.messages(), ...final.steeredMessages()])
        held.add(message.metadata[STEER_ID] ?? message);
      return sent.filter((message) => !held.has(message.metadata[STEER_ID] ?? message));
    },
  };
}

/** An empty chunk stream. */
export async function* noChunks(): AsyncIterable<UIMessageChunk> {}
