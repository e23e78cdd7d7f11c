import type { AgentState } from '../state/agent-state';
import type { Message } from '../state/message';
import type { UIMessageChunk } from '../ui/ui-message';

/** The state the execution answering `messages` (queued to the chat) runs, after `state`. */
export function withQueued(state: AgentState, messages: readonly Message[]): AgentState {
  // messages steered in as the last run concluded came before these
  return state.withSteeringApplied().withSteeredMessages(messages).withSteeringApplied();
}

/**
 * The chunk a chat's stream carries where the answer to queued messages starts (the chat handler's
 * `whileRunning: 'queue'`): transient, so the AI SDK's chat client hands it to `onData` and keeps
 * it out of the message.
 */
/** Each queued message carries the `queueId` its POST waits for in `metadata`. */
export function queuedMarker(messages: readonly Message[]): UIMessageChunk {
  return {
    type: 'data-queued',
    data: { queueIds: messages.map((m) => m.metadata.queueId) },
    transient: true,
  };
}

/** The chunks of a chat's stream from the answer to the message queued as `queueId` on (none if the stream ends first). */
export async function* fromQueuedAnswer(
  chunks: AsyncIterable<UIMessageChunk>,
  queueId: string,
): AsyncIterable<UIMessageChunk> {
  let answering = false;
  for await (const chunk of chunks) {
    if (answering) yield chunk;
    else if (chunk.type === 'data-queued' && queuedIds(chunk).includes(queueId)) answering = true;
  }
}

function queuedIds(chunk: UIMessageChunk): readonly string[] {
  const data = 'data' in chunk ? (chunk.data as { queueIds?: unknown }) : undefined;
  return Array.isArray(data?.queueIds) ? (data.queueIds as string[]) : [];
}
