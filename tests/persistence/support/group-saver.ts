/**
 * Child process of tests/persistence/durability.test.ts: SESSIONS sessions of a FileSessionStore
 * or SqliteSessionStore with 'full' durability saving at once (group commit), a step appended each
 * time, until it is killed. Prints `saved <sessionId> <version>` after each acknowledged save.
 * Usage: group-saver.ts <file|sqlite> <dir or database file> <sessions>
 */
import { appendToolStep } from '../../../bench/workload';
import { FileSessionStore, SqliteSessionStore } from '../../../src/persistence/index';
import { AgentState } from '../../../src/state/agent-state';

const [kind, path, sessions] = process.argv.slice(2) as [string, string, string];
const store = kind === 'file' ? new FileSessionStore(path) : new SqliteSessionStore(path);

async function session(sessionId: string): Promise<never> {
  let state = AgentState.empty().withUserMessage('go').withExecutionStarted();
  let version: number | null = null;
  for (let step = 0; ; step++) {
    state = appendToolStep(state, step);
    version = await store.save(sessionId, state, version);
    process.stdout.write(`saved ${sessionId} ${version}\n`);
  }
}

await Promise.all(Array.from({ length: Number(sessions) }, (_, i) => session(`s${i}`)));
