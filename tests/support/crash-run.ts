/**
 * Child process of the crash tests: runs the durable agent with a file or SQLite store until it is
 * killed mid-step. Usage: crash-run.ts <file|sqlite> <store path> <session id> <ledger path>
 */
import { FileSessionStore } from '../../src/persistence/file-session-store';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { AgentState } from '../../src/state/agent-state';
import { durableAgent } from './durable-agent';

const [kind, path, sessionId, ledger] = process.argv.slice(2) as [string, string, string, string];
const store = kind === 'sqlite' ? new SqliteSessionStore(path) : new FileSessionStore(path);
const agent = durableAgent(store, ledger, { slowStep: 3 });
await agent.execute(AgentState.empty().withUserMessage('Record five things'), { sessionId });
console.log('finished without being killed');
