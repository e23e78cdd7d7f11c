import { SessionNotFoundError } from '../persistence/errors';
import type { LoadedSession, SessionStore } from '../persistence/session-store';
import { AgentState } from '../state/agent-state';
import { Message } from '../state/message';
import { heldIds, holds } from './chat-message-id';
import { handOffId, type StreamStore } from './stream-store';

/**
 * Messages queued or steered to a chat's run are kept in the stream store (`handedOff`) until they
 * are in the session; then they are settled. A run whose process died leaves them there: the run
 * that claims the chat next takes them first, in order, and each is taken once, since one that is
 * in the session already (saved before the process died, not yet settled) is only settled.
 */

/**
 * Called by the run that has just claimed the chat (stream `streamId`): the messages handed to the
 * chat's earlier runs that are not in the session (their process died first; told by their id) are saved to its
 * steering section, which the new run applies first; then all of them are settled. Resolves the
 * session as it is then when it loaded it (null: none stored), undefined when there were none.
 */
export async function adoptHandedOff(
  store: SessionStore,
  streams: StreamStore,
  chatId: string,
  streamId: string,
): Promise<LoadedSession | null | undefined> {
  const earlier = (await streams.handedOff(chatId)).filter((h) => h.streamId !== streamId);
  if (earlier.length === 0) return undefined;
  const stored = await store.load(chatId);
  const held = heldIds(stored?.state);
  const missing = earlier.map((h) => Message.of(h.message)).filter((m) => !holds(held, m));
  let session = stored;
  if (missing.length > 0) {
    const state = (stored?.state ?? AgentState.empty()).withSteeredMessages(missing);
    session = { state, version: await store.save(chatId, state, stored?.version ?? null) };
  }
  await streams.settle(
    chatId,
    earlier.map((h) => handOffId(h.message)),
  );
  return session;
}

/**
 * Called as a run ends, once what it took is saved: settles the handed-off messages the session
 * holds. Those it does not (heard too late, or the run failed before saving them) stay for the
 * chat's next run.
 */
export async function settleHandedOff(
  store: SessionStore,
  streams: StreamStore,
  chatId: string,
): Promise<void> {
  const pending = await streams.handedOff(chatId);
  if (pending.length === 0) return;
  const held = heldIds((await store.load(chatId))?.state);
  await streams.settle(
    chatId,
    pending.filter((h) => holds(held, h.message)).map((h) => handOffId(h.message)),
  );
}

/**
 * Messages steered to a run as it concluded (after its last save, or once its actor had finished)
 * are saved to the session's steering section: the chat's next execution applies them first.
 * Those the session holds already are not added again (told by their id): once the run's stream
 * has ended, the chat's next run may have adopted them from the hand-off list first. Resolves the
 * session as saved (as loaded when there was nothing to add), or null when there were none.
 */
export async function keepLateSteering(
  store: SessionStore,
  chatId: string,
  late: readonly Message[],
): Promise<{ state: AgentState; version: number } | null> {
  if (late.length === 0) return null;
  const stored = await store.load(chatId);
  if (!stored) throw new SessionNotFoundError(chatId);
  const held = heldIds(stored.state);
  const missing = late.filter((message) => !holds(held, message));
  if (missing.length === 0) return stored;
  const state = stored.state.withSteeredMessages(missing);
  return { state, version: await store.save(chatId, state, stored.version) };
}
