/**
 * `agent-machine replay` reads its input and writes nothing into it: stores are opened read-only,
 * a path that holds no session (an empty file, another application's database, an empty store)
 * fails the command with a message; `--tools live` runs the agent's tools; a TypeScript agent
 * module loads through tsx when the CLI runs without a loader.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { agent } from './fixtures/sum-agent';

const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURE = 'tests/replay/fixtures/sum-agent.ts';

type Run = { code: number; stdout: string; stderr: string };
function run(command: string, args: string[]): Promise<Run> {
  return new Promise((done) => {
    execFile(command, args, { cwd: ROOT }, (error, stdout, stderr) => {
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
/** The CLI from its sources, under tsx. */
const cli = (...args: string[]) => run('npx', ['tsx', 'src/cli.ts', ...args]);

const digest = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
/** The files of a folder with their digests: what a command must leave as it found it. */
const snapshot = (dir: string) =>
  Object.fromEntries(readdirSync(dir).map((name) => [name, digest(join(dir, name))]));

let dir: string;
beforeAll(async () => {
  // inside the project, where the agent module's imports resolve; the folder is not there in a fresh clone
  await mkdir(resolve(ROOT, 'test-output'), { recursive: true });
  dir = await mkdtemp(join(resolve(ROOT, 'test-output'), 'replay-cli-input-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.concurrent('agent-machine replay: its input', { timeout: 120_000 }, () => {
  it('refuses an empty file with a message and exit 1, and leaves it empty (no tables, no WAL)', async () => {
    const at = join(dir, 'empty');
    await mkdir(at);
    const file = join(at, 'empty.db');
    await writeFile(file, '');
    const { code, stdout, stderr } = await cli('replay', '--agent', `${FIXTURE}#agent`, file);
    expect(code).toBe(1);
    expect(stderr).toContain('not a session store: the file is empty');
    expect(stdout).not.toContain('0 sessions replayed');
    expect(readdirSync(at)).toEqual(['empty.db']);
    expect(statSync(file).size).toBe(0);
  });

  it("refuses another application's SQLite database and changes nothing in it (tables, journal mode)", async () => {
    const at = join(dir, 'other');
    await mkdir(at);
    const file = join(at, 'app.db');
    const Database = createRequire(import.meta.url)('better-sqlite3');
    const db = new Database(file);
    db.exec(
      "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO users (name) VALUES ('ann')",
    );
    db.close();
    const before = snapshot(at);
    const { code, stderr } = await cli('replay', '--agent', `${FIXTURE}#agent`, file);
    expect(code).toBe(1);
    expect(stderr).toContain('has no table "sessions"');
    expect(snapshot(at)).toEqual(before);
    const after = new Database(file, { readonly: true });
    expect(after.pragma('journal_mode', { simple: true })).toBe('delete');
    expect(after.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all()).toEqual([
      { name: 'users' },
    ]);
    after.close();
  });

  it('refuses a session store with no sessions, and a folder that holds none: exit 1, a message', async () => {
    const file = join(dir, 'none.db');
    const store = new SqliteSessionStore(file);
    await store.save('gone', AgentState.empty(), null);
    await store.delete('gone');
    await store.close();
    const empty = await cli('replay', '--agent', `${FIXTURE}#agent`, file);
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('holds no sessions to replay');
    const folder = join(dir, 'nothing');
    await mkdir(folder);
    const none = await cli('replay', '--agent', `${FIXTURE}#agent`, folder);
    expect(none.code).toBe(1);
    expect(existsSync(join(folder, 'sessions.db'))).toBe(false);
  });

  it('--tools live runs the tools and catches a changed one; recorded results do not', async () => {
    const at = join(dir, 'live');
    await mkdir(at);
    const file = join(at, 'sessions.db');
    const store = new SqliteSessionStore(file);
    await createAgent({ ...agent.definition, store }).execute(AgentState.empty().withUserMessage('2 + 3?'), {
      sessionId: 'chat-1',
    });
    await store.close();
    const before = snapshot(at);
    const recorded = await cli('replay', '--agent', `${FIXTURE}#changedTool`, file);
    expect(recorded.stdout).toContain('ok       chat-1');
    expect(recorded.code).toBe(0);
    const live = await cli('replay', '--agent', `${FIXTURE}#changedTool`, '--tools', 'live', file);
    expect(live.stdout).toContain(
      'DIVERGED chat-1: step 1 (tool-result) at toolExecutions[0].value.total: recorded 5, replayed 6',
    );
    expect(live.code).toBe(1);
    expect(snapshot(at)).toEqual(before);
    const wrong = await cli('replay', '--agent', `${FIXTURE}#agent`, '--tools', 'sometimes', file);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('--tools takes recorded or live');
  });

  it('loads a TypeScript agent module through tsx when the CLI runs without a loader', async () => {
    // the CLI and the main entry built as the package ships them (ESM, one copy of each class)
    const out = join(dir, 'built');
    const build = await run('npx', [
      'esbuild',
      'src/cli.ts',
      'src/index.ts',
      '--bundle',
      '--splitting',
      '--format=esm',
      '--platform=node',
      '--target=node20',
      '--packages=external',
      `--outdir=${out}`,
      '--out-extension:.js=.mjs',
    ]);
    expect(build.code).toBe(0);
    await writeFile(
      join(out, 'agent.ts'),
      [
        "import { createAgent, scriptedDriver, type AgentDefinition } from './index.mjs';",
        "const definition: AgentDefinition = { driver: scriptedDriver([{ text: 'hi' }]) };",
        'export default createAgent(definition);',
      ].join('\n'),
    );
    const file = join(out, 'sessions.db');
    const {
      createAgent: builtAgent,
      scriptedDriver,
      SqliteSessionStore: BuiltStore,
      AgentState: BuiltState,
    } = await import(join(out, 'index.mjs'));
    const store = new BuiltStore(file);
    await builtAgent({ driver: scriptedDriver([{ text: 'hi' }]), store }).execute(
      BuiltState.empty().withUserMessage('hello'),
      { sessionId: 'ts-1' },
    );
    await store.close();
    const { code, stdout, stderr } = await run(process.execPath, [
      join(out, 'cli.mjs'),
      'replay',
      '--agent',
      join(out, 'agent.ts'),
      file,
    ]);
    expect(stderr).not.toContain('Unknown file extension');
    expect(stdout).toContain('ok       ts-1 (1 steps, completed)');
    expect(code).toBe(0);
  });
});
