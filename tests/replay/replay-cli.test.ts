import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FileSessionStore } from '../../src/persistence/file-session-store';
import type { SessionStore } from '../../src/persistence/session-store';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { agent } from './fixtures/sum-agent';

const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURE = 'tests/replay/fixtures/sum-agent.ts';

/** Runs `npx tsx src/cli.ts ...args` as a real child process. */
function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile('npx', ['tsx', 'src/cli.ts', ...args], { cwd: ROOT }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      done({
        code,
        stdout,
        stderr: stderr
          .split('\n')
          .filter((l) => !l.startsWith('npm warn'))
          .join('\n'),
      });
    });
  });
}

let dir: string;
let sqliteFile: string;
let storeDir: string;
let stateDir: string;

async function record(store: SessionStore, ids: string[]) {
  const recording = createAgent({ ...agent.definition, store });
  for (const id of ids)
    await recording.execute(AgentState.empty().withUserMessage(`question ${id}`), { sessionId: id });
  await store.close();
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-machine-replay-cli-'));
  sqliteFile = join(dir, 'sessions.db');
  storeDir = join(dir, 'store');
  stateDir = join(dir, 'states');
  await record(new SqliteSessionStore(sqliteFile), ['chat-1', 'chat-2']);
  await record(new FileSessionStore(storeDir), ['chat-3']);
  await mkdir(stateDir);
  const state = await agent.execute(AgentState.empty().withUserMessage('question 4'));
  await writeFile(join(stateDir, 'chat-4.json'), JSON.stringify(state));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.concurrent('agent-machine replay', { timeout: 90_000 }, () => {
  it('replays every session of a SQLite file: one line each, a summary, exit 0', async () => {
    const { code, stdout } = await cli('replay', '--agent', `${FIXTURE}#agent`, sqliteFile);
    expect(stdout).toBe(
      [
        'ok       chat-1 (2 steps, completed)',
        'ok       chat-2 (2 steps, completed)',
        '2 sessions replayed: 2 equal, 0 diverged',
        '',
      ].join('\n'),
    );
    expect(code).toBe(0);
  });

  it('takes a FileSessionStore folder and a folder of saved states, and the default export', async () => {
    const store = await cli('replay', '--agent', FIXTURE, storeDir);
    expect(store.stdout).toContain('ok       chat-3 (2 steps, completed)');
    expect(store.code).toBe(0);
    const states = await cli('replay', `--agent=${FIXTURE}`, stateDir);
    expect(states.stdout).toContain('ok       chat-4.json (2 steps, completed)');
    expect(states.code).toBe(0);
  });

  it('exits 1, names the step, kind and path of each divergence, and writes its page with --html', async () => {
    const pages = join(dir, 'pages');
    const { code, stdout } = await cli(
      'replay',
      '--agent',
      `${FIXTURE}#changed`,
      '--html',
      pages,
      sqliteFile,
    );
    expect(stdout).toContain(
      `DIVERGED chat-1: step 1 (request) at request.system: recorded "You add numbers.", replayed "You multiply numbers." (see ${join(pages, 'chat-1.html')})`,
    );
    expect(await readFile(join(pages, 'chat-1.html'), 'utf8')).toContain('data-testid="divergence"');
    expect(stdout).toContain('2 sessions replayed: 0 equal, 2 diverged');
    expect(code).toBe(1);
  });

  it('refuses an export that is not an agent, and a wrong command line', async () => {
    const bad = await cli('replay', '--agent', `${FIXTURE}#notAnAgent`, sqliteFile);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(
      'the export "notAnAgent" of tests/replay/fixtures/sum-agent.ts is not an agent',
    );
    const usage = await cli('replay', sqliteFile);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('replay needs --agent <module>[#<export>]');
  });
});
