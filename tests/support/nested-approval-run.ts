/** Child process of the nested approval restart test: runs until the subagent waits for approval, then exits. */
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { AgentState } from '../../src/state/agent-state';
import { TRANSFER_LEDGER_ENV } from './approval-agent';
import { nestedApprovalAgent } from './nested-approval-agent';

const [db, sessionId] = process.argv.slice(2) as [string, string];
const store = new SqliteSessionStore(db);
const agent = nestedApprovalAgent(store, process.env[TRANSFER_LEDGER_ENV] ?? 'ledger.txt');
const state = await agent.execute(AgentState.empty().withUserMessage('Pay Bob 40'), { sessionId });
await store.close();
console.log(
  `waiting for approval of ${state
    .pendingApprovals()
    .map((p) => `${(p.path ?? []).join('/')}/${p.toolCallId}`)
    .join(', ')}`,
);
