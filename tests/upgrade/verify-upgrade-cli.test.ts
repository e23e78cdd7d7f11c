import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentState, FileSessionStore, type SessionStore, SqliteSessionStore } from '../../src/index';
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

async function park(store: SessionStore) {
  const agent = v1(store);
  await agent.execute(AgentState.empty().withUserMessage('pay bob 40'), { sessionId: 'root-1' });
  await agent.execute(AgentState.empty().withUserMessage('nested: pay bob 40'), { sessionId: 'nested-1' });
  await agent.execute(AgentState.empty().withUserMessage('hello'), { sessionId: 'done-1' });
  await store.close();
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-machine-verify-upgrade-'));
  sqliteFile = join(dir, 'sessions.db');
  storeDir = join(dir, 'store');
  await park(new SqliteSessionStore(sqliteFile));
  await park(new FileSessionStore(storeDir));
}, 60_000);

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.concurrent('agent-machine verify-upgrade', { timeout: 90_000 }, () => {
  it('exits 1 when version 2 comes without its migration: the waiting sessions are orphaned', async () => {
    const before = readFileSync(sqliteFile);
    const { code, stdout } = await cli('verify-upgrade', '--agent', `${FIXTURE}#v2Unmigrated`, sqliteFile);
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(4);
    expect(lines[0]).toMatch(/^changed +done-1 \(from 1\): step 1 \(request\) at request\.system/);
    expect(lines[1]).toBe(
      "ORPHANED     nested-1 (from 1): a pending call t1 to 'send_payment' inside subagent payer, a tool this agent lacks",
    );
    expect(lines[2]).toBe(
      "ORPHANED     root-1 (from 1): a pending call t1 to 'send_payment', a tool this agent lacks",
    );
    expect(lines[3]).toBe('3 sessions checked: 0 ok, 1 changed, 2 orphaned, 0 unreplayable');
    expect(code).toBe(1);
    // opened read-only: the file is as it was
    expect(readFileSync(sqliteFile).equals(before)).toBe(true);
  });

  it('exits 0 with the migration; --strict exits 1 on the changed sessions', async () => {
    const plain = await cli('verify-upgrade', '--agent', `${FIXTURE}#v2`, sqliteFile);
    expect(plain.stdout).toContain('3 sessions checked: 0 ok, 3 changed, 0 orphaned, 0 unreplayable');
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
