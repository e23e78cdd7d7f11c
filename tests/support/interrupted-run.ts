/**
 * Child process of the interrupted-call tests: runs the interrupted agent until its unsafe `pay`
 * call starts, prints the crash point and waits there to be SIGKILLed (its intent is saved: a load
 * finds the call interrupted). Usage: interrupted-run.ts <file|sqlite> <store path> <session id> <root|nested|asked> (asked: the root's `pay` needs approval, approved here first)
 */
import { FileSessionStore } from '../../src/persistence/file-session-store';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { AgentState } from '../../src/state/agent-state';
import { CRASH_POINT, interruptedAgent } from './interrupted-agent';

const [kind, path, sessionId, where] = process.argv.slice(2) as [string, string, string, string];
const store = kind === 'sqlite' ? new SqliteSessionStore(path) : new FileSessionStore(path);
const { agent } = interruptedAgent(store, {
  nested: where === 'nested',
  asked: where === 'asked',
  onPay: () => {
    process.stdout.write(`${CRASH_POINT}\n`);
    // a timer holds the process open until the SIGKILL: a bare pending promise would let it exit
    return new Promise<void>(() => setInterval(() => {}, 60_000));
  },
});
const waiting = await agent.execute(AgentState.empty().withUserMessage('Pay Bob 5'), { sessionId });
await agent.decide(
  sessionId,
  waiting
    .pendingApprovals()
    .map((p) => ({ toolCallId: p.toolCallId, signature: p.signature, type: 'approve' })),
);
console.log('finished without being killed');
