/**
 * Child process of tests/persistence/file-session-store-processes.test.ts: saves one session of a
 * FileSessionStore `count` times, each a step appended to what it loads, going on after a conflict
 * (another process saved first). Prints `ready`, waits for a line on stdin, then prints
 * `saved <version> <marker>` for every save acknowledged (the marker is the step's number).
 * Usage: file-saver.ts <dir> <sessionId> <first marker> <count> [lockTimeoutMs]
 */
import { once } from 'node:events';
import { appendToolStep } from '../../../bench/workload';
import { FileSessionStore, SessionConflictError } from '../../../src/persistence/index';

const [dir, sessionId, firstText, countText, lockTimeoutMs] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string | undefined,
];
const store = new FileSessionStore(dir, lockTimeoutMs ? { lockTimeoutMs: Number(lockTimeoutMs) } : {});
process.stdout.write('ready\n');
await once(process.stdin, 'data');
process.stdin.destroy();
const first = Number(firstText);
for (let marker = first; marker < first + Number(countText); ) {
  const loaded = await store.load(sessionId);
  if (!loaded) throw new Error(`session ${sessionId} not found`);
  try {
    const version = await store.save(sessionId, appendToolStep(loaded.state, marker), loaded.version);
    process.stdout.write(`saved ${version} ${marker}\n`);
    marker++;
  } catch (error) {
    if (!(error instanceof SessionConflictError)) throw error;
  }
}
await store.close();
