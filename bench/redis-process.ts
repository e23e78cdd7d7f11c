/**
 * Child processes of the distributed benchmarks: a redis-server of their own (127.0.0.1, a free
 * port, a temporary directory, no persistence) and a wait for a line a child prints.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function redisServerPath(): string | null {
  try {
    return execFileSync('which', ['redis-server'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

/** `extraArgs` come last, so they override the defaults (`--appendonly yes`: persistence). */
export async function startRedis(
  binary: string,
  extraArgs: readonly string[] = [],
): Promise<{ port: number; pid: number; stop(): Promise<void> }> {
  const port = await new Promise<number>((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
  const dir = mkdtempSync(join(tmpdir(), 'agent-machine-bench-redis-'));
  const child = spawn(
    binary,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      'no',
      ...extraArgs,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  await waitForOutput(child, 'Ready to accept connections', 10_000);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    port,
    pid: child.pid ?? 0,
    stop: async () => {
      child.kill('SIGKILL');
      await exited;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function waitForOutput(child: ChildProcess, text: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(
      () => finish(new Error(`no "${text}" within ${timeoutMs} ms: ${output}`)),
      timeoutMs,
    );
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes(text)) finish();
    };
    const onExit = (code: number | null) => finish(new Error(`exited (${code}) before "${text}": ${output}`));
    const finish = (error?: Error) => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      // The output is not needed any more, but must not fill the pipes.
      child.stdout?.resume();
      child.stderr?.resume();
      if (error) {
        child.kill('SIGKILL');
        reject(error);
      } else resolve();
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk;
    });
    child.on('exit', onExit);
  });
}

/**
 * A bench's worker child process: prints `ready <tag>`, closes with `close` and exits 0 on
 * SIGTERM, and exits 1 when its parent goes away (stdin ends).
 */
export function serveUntilTerminated(tag: string, close: () => Promise<unknown>): void {
  process.once('SIGTERM', () => {
    void close().then(() => process.exit(0));
  });
  process.stdin.on('end', () => process.exit(1));
  process.stdin.resume();
  process.stdout.write(`ready ${tag}\n`);
}
