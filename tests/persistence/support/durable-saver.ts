/**
 * Child process of tests/persistence/durability.test.ts: saves one session of a FileSessionStore
 * or SqliteSessionStore with the given durability, a step appended each time, until it is killed.
 * Prints `durability <mode>` once, then `saved <version>` after each acknowledged save.
 * Usage: durable-saver.ts <file|sqlite> <dir or database file> <sessionId> <full|process> [lockHoldMs]
 */
import { appendToolStep } from '../../../bench/workload';
import { type Durability, FileSessionStore, SqliteSessionStore } from '../../../src/persistence/index';
import { AgentState } from '../../../src/state/agent-state';

const [kind, path, sessionId, durability, lockHoldMs] = process.argv.slice(2) as [
  string,
  string,
  string,
  Durability,
  string | undefined,
];
const store =
  kind === 'file'
    ? new FileSessionStore(path, { durability, ...(lockHoldMs && { lockHoldMs: Number(lockHoldMs) }) })
    : new SqliteSessionStore(path, { durability });
process.stdout.write(`durability ${store.durability}\n`);
let state = AgentState.empty().withUserMessage('go').withExecutionStarted();
let version: number | null = null;
for (let step = 0; ; step++) {
  state = appendToolStep(state, step);
  version = await store.save(sessionId, state, version);
  process.stdout.write(`saved ${version}\n`);
}
