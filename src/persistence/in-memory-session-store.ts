import type { AgentState } from '../state/agent-state';
import { SessionConflictError, StoreClosedError } from './errors';
import {
  decodeSessionDocument,
  encodeSessionDocument,
  type StoredAt,
  storedVersion,
} from './session-document';
import { assertSessionId } from './session-id';
import type { LoadedSession, SessionStore } from './session-store';
import { assertExpectedVersion, assertState } from './store-arguments';

/**
 * A SessionStore in process memory, for tests and single-process apps that need no durability.
 * It stores the serialized document (as FileSessionStore writes it), not the AgentState object,
 * so a load returns what a durable store would: the step in flight (transient) is not kept, and
 * nothing the caller does to a loaded state can reach the stored one.
 *
 * @example
 * const store = new InMemorySessionStore();
 * const version = await store.save('chat-42', AgentState.empty().withUserMessage('hi'), null); // 1
 * (await store.load('chat-42'))?.state.messages()[0]?.content;                                // 'hi'
 */
export class InMemorySessionStore implements SessionStore {
  private readonly documents: Map<string, string>;
  private closed = false;

  /**
   * @param options.documents the map that holds the serialized documents, by session id. Pass
   *   one to share sessions between several stores (as if they were processes on one database).
   */
  constructor(options: { documents?: Map<string, string> } = {}) {
    this.documents = options.documents ?? new Map();
  }

  async load(sessionId: string): Promise<LoadedSession | null> {
    const id = this.check(sessionId);
    const text = this.documents.get(id);
    return text === undefined ? null : decodeSessionDocument(text, this.at(id));
  }

  async save(sessionId: string, state: AgentState, expectedVersion: number | null): Promise<number> {
    const id = this.check(sessionId);
    assertState(state);
    assertExpectedVersion(expectedVersion);
    // No await between the check and the write: in one process that makes them atomic.
    const text = this.documents.get(id);
    const actual = text === undefined ? null : storedVersion(text, this.at(id));
    if (actual !== expectedVersion) throw new SessionConflictError(id, expectedVersion, actual);
    const version = (actual ?? 0) + 1;
    this.documents.set(id, encodeSessionDocument(version, state));
    return version;
  }

  async delete(sessionId: string): Promise<void> {
    this.documents.delete(this.check(sessionId));
  }

  async list(): Promise<string[]> {
    this.checkOpen();
    return [...this.documents.keys()].sort();
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private at(sessionId: string): StoredAt {
    return { sessionId, location: `memory#${sessionId}` };
  }

  private check(sessionId: string): string {
    this.checkOpen();
    return assertSessionId(sessionId);
  }

  private checkOpen(): void {
    if (this.closed) throw new StoreClosedError('InMemorySessionStore');
  }
}
