import { type ChildProcess, spawn } from 'node:child_process';

/**
 * Chat server processes for the cross-process tests: `start(env)` runs `script` (a TypeScript file
 * that prints `{"port":N}` once it listens) in a child process and resolves with its address and
 * chat api; `killAll()` ends those still running.
 */
export function chatProcesses(script: string) {
  const started: ChildProcess[] = [];
  return {
    async start(env: Record<string, string>): Promise<{ url: string; api: string; child: ChildProcess }> {
      const child = spawn(process.execPath, ['--import', 'tsx', script], {
        env: { ...process.env, ...env },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
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
      const url = `http://127.0.0.1:${port}`;
      return { url, api: `${url}/api/chat`, child };
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
