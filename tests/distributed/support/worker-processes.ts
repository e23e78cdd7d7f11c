import { type ChildProcess, spawn } from 'node:child_process';
import type { WorkerProcessConfig } from './worker-process';

export interface WorkerProcess {
  readonly tag: string;
  readonly child: ChildProcess;
  /** Resolves with the signal (or exit code) the process ended with. */
  readonly exited: Promise<NodeJS.Signals | number | null>;
  /** Everything it printed, for failure messages. */
  output(): string;
  /** SIGKILL (if still running), then waits for the exit. */
  kill(): Promise<NodeJS.Signals | number | null>;
}

/** Starts tests/distributed/support/worker-process.ts and resolves once it takes jobs (within `readyTimeoutMs`, default 30 s). */
export async function startWorkerProcess(
  config: WorkerProcessConfig,
  readyTimeoutMs = 30_000,
): Promise<WorkerProcess> {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'tests/distributed/support/worker-process.ts', JSON.stringify(config)],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout?.on('data', (d) => {
    output += d;
  });
  child.stderr?.on('data', (d) => {
    output += d;
  });
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.once('exit', (code, signal) => resolve(signal ?? code)),
  );
  const worker: WorkerProcess = {
    tag: config.tag,
    child,
    exited,
    output: () => output,
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      return exited;
    },
  };
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      clearInterval(poll);
      child.kill('SIGKILL');
      reject(new Error(`worker ${config.tag} not ready within ${readyTimeoutMs} ms: ${output}`));
    }, readyTimeoutMs);
    const poll = setInterval(() => {
      if (output.includes(`ready ${config.tag}`)) {
        clearInterval(poll);
        clearTimeout(timer);
        resolve();
      } else if (child.exitCode !== null || child.signalCode !== null) {
        clearInterval(poll);
        clearTimeout(timer);
        reject(new Error(`worker ${config.tag} exited before it was ready: ${output}`));
      }
    }, 20);
  });
  return worker;
}
