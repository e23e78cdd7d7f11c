import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isRunning } from './support/mock-model';

/** Runs tests/mcp/support/close-while-starting.ts; resolves with its exit and output, or 'still running' after the safety net. */
async function closeWhileStarting(mode: string, request: string, times: number) {
  const log = join(mkdtempSync(join(tmpdir(), 'mcp-close-')), 'requests');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'tests/mcp/support/close-while-starting.ts', mode, log, request, String(times)],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let safetyNet: NodeJS.Timeout | undefined;
  const outcome = await Promise.race([
    exited,
    new Promise<'still running'>((resolve) => {
      safetyNet = setTimeout(() => resolve('still running'), 40_000);
    }),
  ]);
  clearTimeout(safetyNet);
  const report = stdout ? (JSON.parse(stdout) as { serverPid: number; status: string; code?: string }) : null;
  if (outcome === 'still running') {
    child.kill('SIGKILL');
    // the servers it left behind, by the pids in their log
    for (const line of existsSync(log) ? readFileSync(log, 'utf8').trim().split('\n') : []) {
      const pid = Number(line.split(' ')[0]);
      if (isRunning(pid)) process.kill(pid, 'SIGKILL');
    }
  }
  return { outcome, report, stderr };
}

describe('agent.close() while an MCP stdio server is starting', () => {
  it.each([
    ['never answers initialize (and outlives its stdin)', 'silent', 'initialize', 1],
    // closed at the 12th page: each page's request must leave no listener on the start's signal
    ['lists its tools in pages without end', 'endless-pages', 'tools/list', 12],
  ])(
    'stops a server that %s: the process exits by itself, no server process remains',
    async (_what, mode, request, times) => {
      const { outcome, report, stderr } = await closeWhileStarting(mode, request, times);
      expect(stderr).toBe('');
      expect(outcome).toBe(0);
      expect(report).toMatchObject({ status: 'failed', code: 'MCP_SERVER_CLOSED' });
      expect(isRunning(Number(report?.serverPid))).toBe(false);
    },
    60_000,
  );
});
