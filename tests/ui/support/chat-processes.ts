import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * Chat server processes (support/chat-process.ts) for the cross-process tests: `start(env)` spawns
 * one and resolves with its chat api once it listens; `killAll()` ends those still running.
 */
export function chatProcesses() {
  const started: ChildProcess[] = [];
  return {
    async start(env: Record<string, string>): Promise<{ api: string; child: ChildProcess }> {
      const child = spawn(
        process.execPath,
        ['--import', 'tsx', join(import.meta.dirname, 'chat-process.ts')],
        {
          env: { ...process.env, ...env },
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      );
      started.push(child);
      const port = await new Promise<number>((resolve, reject) => {
        let out = '';
        child.stdout?.on('data', (data: Buffer) => {
          out += data.toString();
          const line = /\{"port":(\d+)\}/.exec(out);
          if (line) resolve(Number(line[1]));
        });
        child.once('exit', (code) => reject(new Error(`the chat process exited (${code}) before listening`)));
      });
      return { api: `http://127.0.0.1:${port}/api/chat`, child };
    },
    killAll(): void {
      for (const child of started)
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    },
  };
}

/** Resolves once `condition` holds (checked every few ms; the test's timeout is the safety net). */
export async function until(condition: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await condition())) await new Promise((resolve) => setTimeout(resolve, 5));
}
