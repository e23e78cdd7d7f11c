/**
 * A message sent to a chat while its run goes on (steered into the run, or queued for the next
 * execution) gets one id at its POST, made here; the run, the stream store's hand-off list and the
 * next run all tell by that id alone whether the session holds the message already.
 */
import type { AgentState } from '../state/agent-state';
import { newId } from '../state/ids';
import { Message } from '../state/message';

/**
 * The metadata key of a message steered (or queued) into a chat's run: its id. A queued message
 * carries the same id as `queueId` too, the key its POST's answer waits for (`data-queued`).
 */
export const STEER_ID = 'steerId';

/** A user message sent to a chat whose run goes on: steered (`queued` false) or queued, with its one id. */
export function handedOffMessage(text: string, options: { readonly queued: boolean }): Message {
  const id = newId();
  const metadata = options.queued ? { [STEER_ID]: id, queueId: id } : { [STEER_ID]: id };
  return Message.of({ role: 'user', content: text, metadata });
}

/**
 * The id a chat handler gave `message` at its POST; undefined for a message no handler tagged.
 * (A queued message of an earlier version carries a `queueId` of its own: that one, as the stream
 * store's hand-off list has always keyed it.)
 */
export function chatMessageId(message: Message): string | undefined {
  const { queueId, steerId } = message.metadata ?? {};
  if (typeof queueId === 'string') return queueId;
  return typeof steerId === 'string' ? steerId : undefined;
}

/** The ids of the handed-off messages `state` holds, in its conversation or its steering section. */
export function heldIds(state: AgentState | null | undefined): ReadonlySet<string> {
  const held = new Set<string>();
  if (!state) return held;
  for (const message of [...state.messages(), ...state.steeredMessages()]) {
    const id = chatMessageId(message);
    if (id !== undefined) held.add(id);
  }
  return held;
}

/** Whether `state` holds `message` (by its id; an untagged message never). */
export function holds(held: ReadonlySet<string>, message: Message): boolean {
  const id = chatMessageId(message);
  return id !== undefined && held.has(id);
}
