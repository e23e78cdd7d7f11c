import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/persistence/file-session-store';
import type { SessionStore } from '../../src/persistence/session-store';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { AgentState } from '../../src/state/agent-state';
import { v1 } from './fixtures/payment-agents';

const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURE = 'tests/upgrade/fixtures/payment-agents.ts';

/** Runs `npx tsx src/cli.ts ...args` as a real child process. */
function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile('npx', ['tsx', 'src/cli.ts', ...args], { cwd: ROOT }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      done({ code, stdout, stderr });
    });
  });
}

let dir: string;
let sqliteFile: string;
let storeDir: string;

/** Parks sessions of version 1: `waiting` at the root and as many inside a subagent, `done` completed. */
async function park(store: SessionStore, waiting: number, done: number) {
  const agent = v1(store);
  for (let i = 1; i <= waiting; i++) {
    await agent.execute(AgentState.empty().withUserMessage('pay bob 40'), { sessionId: `root-${i}` });
    await agent.execute(AgentState.empty().withUserMessage('nested: pay bob 40'), {
      sessionId: `nested-${i}`,
    });
  }
  for (let i = 1; i <= done; i++)
    await agent.execute(AgentState.empty().withUserMessage('hello'), { sessionId: `done-${i}` });
  await store.close();
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-machine-verify-upgrade-'));
  sqliteFile = join(dir, 'sessions.db');
  storeDir = join(dir, 'store');
  await park(new SqliteSessionStore(sqliteFile), 20, 10);
  await park(new FileSessionStore(storeDir), 1, 1);
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.concurrent('agent-machine verify-upgrade', { timeout: 90_000 }, () => {
  it('exits 1 when version 2 comes without its migration: the waiting sessions are orphaned', async () => {
    const before = readFileSync(sqliteFile);
    const { code, stdout } = await cli('verify-upgrade', '--agent', `${FIXTURE}#v2Unmigrated`, sqliteFile);
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(51);
    expect(lines).toContain(
      "ORPHANED     nested-7 (from 1): a pending call t1 to 'send_payment' inside subagent payer, a tool this agent lacks",
    );
    expect(lines).toContain(
      "ORPHANED     root-12 (from 1): a pending call t1 to 'send_payment', a tool this agent lacks",
    );
    expect(lines.filter((l) => l.startsWith('ORPHANED'))).toHaveLength(40);
    expect(lines.find((l) => l.includes('done-3'))).toMatch(
      /^changed +done-3 \(from 1\): step 1 \(request\) at request\.system/,
    );
    expect(lines[50]).toBe('50 sessions checked: 0 ok, 10 changed, 40 orphaned, 0 unreplayable');
    expect(code).toBe(1);
    // opened read-only: the file is as it was
    expect(readFileSync(sqliteFile).equals(before)).toBe(true);
  });

  it('exits 0 with the migration; --strict exits 1 on the changed sessions', async () => {
    const plain = await cli('verify-upgrade', '--agent', `${FIXTURE}#v2`, sqliteFile);
    expect(plain.stdout).toContain('50 sessions checked: 0 ok, 50 changed, 0 orphaned, 0 unreplayable');
    expect(plain.code).toBe(0);
    const strict = await cli('verify-upgrade', '--strict', '--agent', `${FIXTURE}#v2`, sqliteFile);
    expect(strict.code).toBe(1);
  });

  it('takes a FileSessionStore folder; version 1 itself is ok', async () => {
    const { code, stdout } = await cli('verify-upgrade', '--strict', '--agent', `${FIXTURE}#v1`, storeDir);
    expect(stdout).toContain('ok           root-1 (from 1)');
    expect(stdout).toContain('3 sessions checked: 3 ok, 0 changed, 0 orphaned, 0 unreplayable');
    expect(code).toBe(0);
  });

  it('exits 2 on a wrong command line, 1 on a path that is no store', async () => {
    expect((await cli('verify-upgrade', sqliteFile)).code).toBe(2);
    const missing = await cli('verify-upgrade', '--agent', `${FIXTURE}#v2`, join(dir, 'nothing.db'));
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no such file or folder');
  });
});
