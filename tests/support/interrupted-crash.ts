import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { FileSessionStore } from '../../src/persistence/file-session-store';
import type { SessionStore } from '../../src/persistence/session-store';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { CRASH_POINT } from './interrupted-agent';

export type CrashStoreKind = 'file' | 'sqlite';

/** Where a store of `kind` lives in `dir`, and how to open it. */
export function crashStore(kind: CrashStoreKind, dir: string): { path: string; open: () => SessionStore } {
  const path = join(dir, kind === 'sqlite' ? 'sessions.db' : 'sessions');
  return {
    path,
    open: () => (kind === 'sqlite' ? new SqliteSessionStore(path) : new FileSessionStore(path)),
  };
}

/**
 * Runs the interrupted agent in a child process (tests/support/interrupted-run.ts) and SIGKILLs it
 * once its unsafe `pay` call has started: the session is left as a crash leaves it.
 */
export async function crashInPay(
  kind: CrashStoreKind,
  path: string,
  sessionId: string,
  where: 'root' | 'nested' | 'asked',
): Promise<void> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'tests/support/interrupted-run.ts', kind, path, sessionId, where],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, signal) => resolve(signal)),
  );
  child.stderr.on('data', (d) => (output += d));
  child.stdout.on('data', (d) => {
    output += d;
    if (output.includes(CRASH_POINT)) child.kill('SIGKILL');
  });
  const signal = await exited;
  if (signal !== 'SIGKILL') throw new Error(`the child was not killed at the crash point: ${output}`);
}
