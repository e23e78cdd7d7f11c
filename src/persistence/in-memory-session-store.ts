import type { AgentState } from '../state/agent-state';
import {
  CheckpointNotFoundError,
  SessionConflictError,
  SessionNotFoundError,
  StoreClosedError,
} from './errors';
import type { Checkpoint, JournaledSessionStore } from './journal/checkpoint';
import {
  assertVersion,
  checkpointsOf,
  forkRecords,
  lastGen,
  lastVersion,
  replayRecords,
} from './journal/journal-log';
import { nextRecord } from './journal/journal-writer';
import { TipCache } from './journal/tip-cache';
import { decodeSessionDocument, type StoredAt, savedAtOf, storedVersion } from './session-document';
import { assertSessionId } from './session-id';
import type { LoadedSession } from './session-store';
import { assertExpectedVersion, assertState } from './store-arguments';

/**
 * What the memory store holds per session: the journal's records (text, oldest first), or a
 * document in the format before the journal (`{"version":N,"savedAt":...,"state":...}`), which
 * loads as it is and becomes a journal at its next save.
 */
export type StoredSession = string[] | string;

/**
 * A SessionStore in process memory, for tests and single-process apps that need no durability.
 * It keeps each session as a journal of serialized records (JOURNAL_FORMAT.md), as the durable
 * stores do, so a load returns what they would: the step in flight (transient) is not kept, and
 * nothing the caller does to a loaded state can reach the stored one. A fork shares the texts of
 * the records before its newest snapshot with its origin; that snapshot and the deltas after it get
 * a generation of their own (JOURNAL_FORMAT.md).
 *
 * @example
 * const store = new InMemorySessionStore();
 * const version = await store.save('chat-42', AgentState.empty().withUserMessage('hi'), null); // 1
 * (await store.load('chat-42'))?.state.messages()[0]?.content;                                // 'hi'
 */
export class InMemorySessionStore implements JournaledSessionStore {
  private readonly documents: Map<string, StoredSession>;
  private readonly tips = new TipCache();
  private closed = false;

  /**
   * @param options.documents the map that holds the sessions, by id. Pass one to share sessions
   *   between several stores (as if they were processes on one database).
   */
  constructor(options: { documents?: Map<string, StoredSession> } = {}) {
    this.documents = options.documents ?? new Map();
  }

  async load(sessionId: string): Promise<LoadedSession | null> {
    const id = this.check(sessionId);
    // Forgotten first: after a load that fails, the next save writes the whole state again.
    this.tips.delete(id);
    const stored = this.documents.get(id);
    if (stored === undefined) return null;
    if (typeof stored === 'string') return decodeSessionDocument(stored, this.at(id));
    const replayed = replayRecords(stored, this.at(id));
    this.tips.set(id, replayed.tip);
    return { state: replayed.state, version: replayed.version };
  }

  async save(sessionId: string, state: AgentState, expectedVersion: number | null): Promise<number> {
    const id = this.check(sessionId);
    assertState(state);
    assertExpectedVersion(expectedVersion);
    // No await between the check and the write: in one process that makes them atomic.
    const stored = this.documents.get(id);
    const at = this.at(id);
    const actual =
      stored === undefined
        ? null
        : typeof stored === 'string'
          ? storedVersion(stored, at)
          : lastVersion(stored, at);
    if (actual !== expectedVersion) throw new SessionConflictError(id, expectedVersion, actual);
    const version = (actual ?? 0) + 1;
    const journal = Array.isArray(stored) ? stored : null;
    const tip = journal ? this.tips.get(id, actual, lastGen(journal, at)) : null;
    const next = nextRecord(tip, state, version);
    if (journal) journal.push(next.text);
    else this.documents.set(id, [next.text]);
    this.tips.set(id, next.commit());
    return version;
  }

  async checkpoints(sessionId: string): Promise<Checkpoint[]> {
    const id = this.check(sessionId);
    const stored = this.documents.get(id);
    if (stored === undefined) return [];
    if (typeof stored !== 'string') return checkpointsOf(stored, this.at(id));
    const { state, version } = decodeSessionDocument(stored, this.at(id));
    return [{ version, stepNumber: state.stepCount(), savedAt: savedAtOf(stored) }];
  }

  async loadCheckpoint(sessionId: string, version: number): Promise<LoadedSession | null> {
    const id = this.check(sessionId);
    assertVersion(version);
    const stored = this.documents.get(id);
    if (stored === undefined) return null;
    if (typeof stored === 'string') {
      const loaded = decodeSessionDocument(stored, this.at(id));
      if (loaded.version !== version) throw new CheckpointNotFoundError(id, version);
      return loaded;
    }
    const { state } = replayRecords(stored, this.at(id), version);
    return { state, version };
  }

  async fork(sessionId: string, version: number, newSessionId: string): Promise<LoadedSession> {
    const id = this.check(sessionId);
    const target = assertSessionId(newSessionId);
    const loaded = await this.loadCheckpoint(id, version);
    if (!loaded) throw new SessionNotFoundError(id);
    const existing = this.documents.get(target);
    if (existing !== undefined) {
      const at = this.at(target);
      const actual = typeof existing === 'string' ? storedVersion(existing, at) : lastVersion(existing, at);
      throw new SessionConflictError(target, null, actual);
    }
    const stored = this.documents.get(id) as StoredSession;
    // The fork shares the texts of the records before its newest snapshot with its origin.
    this.documents.set(
      target,
      typeof stored === 'string' ? stored : forkRecords(stored, version, this.at(id)).texts,
    );
    return loaded;
  }

  async delete(sessionId: string): Promise<void> {
    const id = this.check(sessionId);
    this.documents.delete(id);
    this.tips.delete(id);
  }

  async list(): Promise<string[]> {
    this.checkOpen();
    return [...this.documents.keys()].sort();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.tips.clear();
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
