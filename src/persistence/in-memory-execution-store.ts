import type { AgentState } from '../state/agent-state';
import { DuplicateExecutionError, ExecutionNotFoundError, StoreClosedError } from './errors';
import { ExecutionRecord, stateFromRecord } from './execution-record';
import { decodeStoredRecord } from './execution-record-codec';
import type { ExecutionStore } from './execution-store';

interface Entry {
  readonly executionId: string;
  readonly agentId: string;
  readonly completedAt: number;
  readonly text: string;
}

/**
 * An ExecutionStore in process memory. Keeps each record serialized, as a durable store does, so a
 * record read back is the same as one from SqliteExecutionStore.
 *
 * @example
 * const executions = new InMemoryExecutionStore();
 * const record = await executions.record(await agent.execute(state));
 * (await executions.getById(record.executionId))?.status;   // 'completed'
 */
export class InMemoryExecutionStore implements ExecutionStore {
  private readonly byId = new Map<string, Entry>();
  /** Each agent's entries in completion order. */
  private readonly byAgent = new Map<string, Entry[]>();
  private closed = false;

  async record(state: AgentState): Promise<ExecutionRecord> {
    this.checkOpen();
    const record = ExecutionRecord.fromState(state);
    if (this.byId.has(record.executionId)) throw new DuplicateExecutionError(record.executionId);
    const text = JSON.stringify(record);
    const entry: Entry = {
      executionId: record.executionId,
      agentId: record.agentId,
      completedAt: record.completedAt.getTime(),
      text,
    };
    // Read back before it is kept, so that the log never holds a record it cannot return.
    const stored = this.decode(entry);
    this.byId.set(entry.executionId, entry);
    const list = this.byAgent.get(entry.agentId) ?? [];
    // Insert after every entry that completed at or before it: completion order, ties as recorded.
    let index = list.length;
    while (index > 0 && (list[index - 1] as Entry).completedAt > entry.completedAt) index--;
    list.splice(index, 0, entry);
    this.byAgent.set(entry.agentId, list);
    return stored;
  }

  async getById(executionId: string): Promise<ExecutionRecord | null> {
    this.checkOpen();
    const entry = this.byId.get(executionId);
    return entry ? this.decode(entry) : null;
  }

  async getByAgent(agentId: string): Promise<ExecutionRecord[]> {
    this.checkOpen();
    return (this.byAgent.get(agentId) ?? []).map((entry) => this.decode(entry));
  }

  /** @deprecated Use `getByAgent` (seed 001's name). */
  listByAgent(agentId: string): Promise<ExecutionRecord[]> {
    return this.getByAgent(agentId);
  }

  async rewind(executionId: string): Promise<AgentState> {
    const record = await this.getById(executionId);
    if (!record) throw new ExecutionNotFoundError(executionId);
    return stateFromRecord(record);
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  private decode(entry: Entry): ExecutionRecord {
    return decodeStoredRecord(entry.text, entry.executionId, `memory#executions/${entry.executionId}`);
  }

  private checkOpen(): void {
    if (this.closed) throw new StoreClosedError('InMemoryExecutionStore');
  }
}
