/**
 * Child process of the reconcile tests: runs the reconcile agent with a file or SQLite store; its
 * `pay` hangs after writing the ledger, and the test kills the process there.
 * Usage: reconcile-run.ts <file|sqlite> <store path> <session id> <ledger path> <root|subagent>
 */
import { FileSessionStore } from '../../src/persistence/file-session-store';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { AgentState } from '../../src/state/agent-state';
import { type ReconcilePlace, reconcileAgent } from './reconcile-agent';

const [kind, path, sessionId, ledger, place] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  ReconcilePlace,
];
const store = kind === 'sqlite' ? new SqliteSessionStore(path) : new FileSessionStore(path);
const agent = reconcileAgent(store, ledger, { place, hang: true });
await agent.execute(AgentState.empty().withUserMessage('Pay 5'), { sessionId });
console.log('finished without being killed');
