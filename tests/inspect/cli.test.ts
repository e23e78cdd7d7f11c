import { execFile } from 'node:child_process';
import { mkdtemp, readFile, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { recordedRun } from './support';

const ROOT = resolve(import.meta.dirname, '../..');

/** Runs `npx tsx src/cli.ts ...args` as a real child process. */
function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile('npx', ['tsx', 'src/cli.ts', ...args], { cwd: ROOT }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      // npm may warn about the machine's config on stderr; keep only our lines.
      const ours = stderr
        .split('\n')
        .filter((line) => !line.startsWith('npm warn'))
        .join('\n');
      done({ code, stdout, stderr: ours });
    });
  });
}

let dir: string;
let tracePath: string;
let statePath: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'agent-machine-cli-'));
  const { state, recorder } = await recordedRun();
  tracePath = join(dir, 'trace.json');
  statePath = join(dir, 'state.json');
  await recorder.write(tracePath);
  await writeFile(statePath, JSON.stringify(state, null, 2));
});

// Each run starts npx and tsx (a second or more on a busy machine); the runs go in parallel.
describe.concurrent('agent-machine view', { timeout: 90_000 }, () => {
  it('prints help with --help', async () => {
    const [{ code, stdout }, view] = await Promise.all([cli('--help'), cli('view', '--help')]);
    expect(code).toBe(0);
    expect(stdout).toContain('agent-machine view <file.json> [-o <out.html>]');
    expect(view.code).toBe(0);
    expect(view.stdout).toContain('Usage: agent-machine view');
  });

  it('renders a trace to the -o file', async () => {
    const out = join(dir, 'pages', 'run.html');
    const { code, stdout, stderr } = await cli('view', tracePath, '-o', out);
    expect(stderr.trim()).toBe('');
    expect(code).toBe(0);
    expect(stdout).toBe(`Wrote ${out} (trace, 3 steps, completed (completed))\n`);
    const html = await readFile(out, 'utf8');
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html).toContain('<title>Weather comparison</title>');
  });

  it('renders a state JSON next to it by default, with a title', async () => {
    const { code, stdout } = await cli('view', statePath, '--title', 'My run');
    expect(code).toBe(0);
    expect(stdout).toContain(`Wrote ${join(dir, 'state.html')} (state, 3 steps, completed (completed))`);
    expect(await readFile(join(dir, 'state.html'), 'utf8')).toContain('<title>My run</title>');
  });

  it('fails with exit code 1 on a missing file', async () => {
    const missing = join(dir, 'nope.json');
    const { code, stderr } = await cli('view', missing, '-o', join(dir, 'x.html'));
    expect(code).toBe(1);
    expect(stderr).toBe(`agent-machine: no such file: ${missing}\n`);
    await expect(stat(join(dir, 'x.html'))).rejects.toThrow(/ENOENT/);
  });

  it('fails with exit code 1 on invalid JSON', async () => {
    const bad = join(dir, 'bad.json');
    await writeFile(bad, '{"format": "agent-machine/trace", ');
    const { code, stderr } = await cli('view', bad);
    expect(code).toBe(1);
    expect(stderr).toMatch(new RegExp(`^agent-machine: ${escapeRegExp(bad)} is not valid JSON: `));
  });

  it('fails with exit code 1 on JSON that is neither a trace nor a state', async () => {
    const other = join(dir, 'other.json');
    await writeFile(other, JSON.stringify({ name: 'package', version: '1.0.0' }));
    const { code, stderr } = await cli('view', other);
    expect(code).toBe(1);
    expect(stderr).toContain(
      `agent-machine: ${other}: Not a trace or an AgentState: an object with keys "name", "version"`,
    );
  });

  it('fails with exit code 1 naming the bad field of a trace or a state', async () => {
    const trace = JSON.parse(await readFile(tracePath, 'utf8'));
    trace.entries[4].t = 'soon';
    const badTrace = join(dir, 'bad-trace.json');
    await writeFile(badTrace, JSON.stringify(trace));
    const a = await cli('view', badTrace);
    expect(a.code).toBe(1);
    expect(a.stderr).toContain(`agent-machine: ${badTrace}: Invalid trace at entries[4].t: `);

    const state = JSON.parse(await readFile(statePath, 'utf8'));
    state.execution.status = 'sleeping';
    const badState = join(dir, 'bad-state.json');
    await writeFile(badState, JSON.stringify(state));
    const b = await cli('view', badState);
    expect(b.code).toBe(1);
    expect(b.stderr).toContain(
      `agent-machine: ${badState}: Invalid AgentState at execution.status: expected one of`,
    );
  });

  it('fails with exit code 2 on wrong usage', async () => {
    const [none, unknown, option, noValue, noInput] = await Promise.all([
      cli(),
      cli('show', tracePath),
      cli('view', tracePath, '--colour'),
      cli('view', tracePath, '-o'),
      cli('view'),
    ]);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('Usage:');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe(
      'agent-machine: unknown command "show"\nRun "agent-machine --help" for usage.\n',
    );
    expect(option.code).toBe(2);
    expect(option.stderr).toContain('unknown option "--colour"');
    expect(noValue.code).toBe(2);
    expect(noValue.stderr).toContain('-o needs a value');
    expect(noInput.code).toBe(2);
    expect(noInput.stderr).toContain('view needs an input file');
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
