import type { AgentState } from '../state/agent-state';
import type { ExecutionRecord } from './execution-record';

/**
 * An append-only log of finished executions (seed 001): what ran, how it ended, what it cost, and
 * the final state to rewind to. It lives outside the agent: the agent stays a stateless executor,
 * and whoever runs it decides what to keep.
 *
 * Implementations: InMemoryExecutionStore, SqliteExecutionStore.
 *
 * @example
 * const executions: ExecutionStore = new SqliteExecutionStore('agents.db');
 * const done = await agent.execute(state);
 * await executions.record(done);
 * const history = await executions.getByAgent(done.agentId());
 * const rewound = await executions.rewind(history[0].executionId);   // ready for a new execution
 */
export interface ExecutionStore {
  /**
   * Appends the record of the execution `state` has finished and returns it. Raises
   * ExecutionNotFinishedError for a state whose execution is not finished and
   * DuplicateExecutionError for an execution id already recorded.
   */
  record(state: AgentState): Promise<ExecutionRecord>;
  /** The record of an execution, or null. Raises CorruptExecutionRecordError for unreadable data. */
  getById(executionId: string): Promise<ExecutionRecord | null>;
  /** The agent's records in completion order (by completedAt; ties in the order recorded). */
  getByAgent(agentId: string): Promise<ExecutionRecord[]>;
  /** @deprecated Use `getByAgent` (seed 001's name); the same records. */
  listByAgent(agentId: string): Promise<ExecutionRecord[]>;
  /**
   * The state after that execution, ready for the next one (`stateFromRecord`). Raises
   * ExecutionNotFoundError when the execution is not recorded.
   */
  rewind(executionId: string): Promise<AgentState>;
  /** Releases the store; later calls raise StoreClosedError. */
  close(): Promise<void>;
}
