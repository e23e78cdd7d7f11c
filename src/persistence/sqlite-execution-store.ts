import type { AgentState } from '../state/agent-state';
import { DuplicateExecutionError, ExecutionNotFoundError } from './errors';
import { ExecutionRecord, stateFromRecord } from './execution-record';
import { decodeStoredRecord } from './execution-record-codec';
import type { ExecutionStore } from './execution-store';
import { LazySqliteConnection } from './sqlite-connection';
import { ensureTable, type SqliteDatabase } from './sqlite-driver';

// The summary columns are for queries (usage per agent, failures, ...); record_json is the record.
const EXECUTIONS_DDL = `CREATE TABLE IF NOT EXISTS executions (
  seq INTEGER PRIMARY KEY,
  execution_id TEXT NOT NULL UNIQUE,
  agent_id TEXT NOT NULL,
  parent_agent_id TEXT,
  started_at INTEGER NOT NULL,
  completed_at INTEGER NOT NULL,
  status TEXT NOT NULL,
  stop_reason TEXT NOT NULL,
  step_count INTEGER NOT NULL,
  input_tokens REAL NOT NULL,
  output_tokens REAL NOT NULL,
  total_tokens REAL NOT NULL,
  cost REAL NOT NULL,
  record_json TEXT NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS executions_by_agent ON executions (agent_id, completed_at, seq)`;

const COLUMNS = [
  'seq',
  'execution_id',
  'agent_id',
  'parent_agent_id',
  'started_at',
  'completed_at',
  'status',
  'stop_reason',
  'step_count',
  'input_tokens',
  'output_tokens',
  'total_tokens',
  'cost',
  'record_json',
];

interface Row {
  execution_id: string;
  record_json: string;
}

function prepare(db: SqliteDatabase) {
  ensureTable(db, 'executions', COLUMNS, EXECUTIONS_DDL);
  const exists = db.prepare('SELECT 1 FROM executions WHERE execution_id = ?');
  const insert = db.prepare(
    `INSERT INTO executions (${COLUMNS.slice(1).join(', ')}) VALUES (${COLUMNS.slice(1)
      .map(() => '?')
      .join(', ')})`,
  );
  const append = db.transaction((record: ExecutionRecord, json: string) => {
    if (exists.get(record.executionId)) throw new DuplicateExecutionError(record.executionId);
    insert.run(
      record.executionId,
      record.agentId,
      record.parentAgentId,
      record.startedAt.getTime(),
      record.completedAt.getTime(),
      record.finalStatus,
      record.stopReason,
      record.finalState.stepCount(),
      record.totalUsage.inputTokens,
      record.totalUsage.outputTokens,
      record.totalUsage.totalTokens,
      record.totalUsage.cost,
      json,
    );
  });
  return {
    append: (record: ExecutionRecord, json: string) => append.immediate(record, json),
    byId: db.prepare('SELECT execution_id, record_json FROM executions WHERE execution_id = ?'),
    byAgent: db.prepare(
      'SELECT execution_id, record_json FROM executions WHERE agent_id = ? ORDER BY completed_at, seq',
    ),
  };
}

/**
 * An ExecutionStore in a SQLite database (table `executions`); it can share the file of a
 * SqliteSessionStore. Loads better-sqlite3 at first use (`npm install better-sqlite3`).
 *
 * @example
 * const sessions = new SqliteSessionStore('agents.db');
 * const executions = new SqliteExecutionStore('agents.db');
 * await executions.record(await agent.execute(state));
 */
export class SqliteExecutionStore implements ExecutionStore {
  private readonly connection: LazySqliteConnection<ReturnType<typeof prepare>>;

  /** @param file the database file (created if missing), or ':memory:'. */
  constructor(readonly file: string) {
    this.connection = new LazySqliteConnection(file, 'SqliteExecutionStore', prepare);
  }

  async record(state: AgentState): Promise<ExecutionRecord> {
    const record = ExecutionRecord.fromState(state);
    const json = JSON.stringify(record);
    // Read back before it is kept, so that the log never holds a record it cannot return.
    const stored = this.decode({ execution_id: record.executionId, record_json: json });
    await this.connection.run((db) => db.append(record, json));
    return stored;
  }

  async getById(executionId: string): Promise<ExecutionRecord | null> {
    const row = await this.connection.run((db) => db.byId.get(executionId) as Row | undefined);
    return row ? this.decode(row) : null;
  }

  async getByAgent(agentId: string): Promise<ExecutionRecord[]> {
    const rows = await this.connection.run((db) => db.byAgent.all(agentId) as Row[]);
    return rows.map((row) => this.decode(row));
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

  close(): Promise<void> {
    return this.connection.close();
  }

  private decode(row: Row): ExecutionRecord {
    return decodeStoredRecord(
      row.record_json,
      row.execution_id,
      `${this.file}#executions/${row.execution_id}`,
    );
  }
}
