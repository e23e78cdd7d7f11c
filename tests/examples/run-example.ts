import { spawn } from 'node:child_process';

export interface ExampleRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs an example as its documented command does (`node --import tsx <file>`) from the repository
 * root, without the parent's OPENAI_* variables unless `env` sets them. Asynchronous, so a loopback
 * server in the test process keeps answering while the example runs.
 */
export function runExample(file: string, env: Record<string, string> = {}): Promise<ExampleRun> {
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([name]) => !name.startsWith('OPENAI_')),
  );
  const child = spawn(process.execPath, ['--import', 'tsx', file], {
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
