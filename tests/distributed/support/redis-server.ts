import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A redis-server of our own on 127.0.0.1, a free port and a temporary directory, without persistence. */
export interface RedisServer {
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly connection: { host: string; port: number };
  /** Kills the server and removes its directory. */
  stop(): Promise<void>;
}

/** The path of redis-server, or null when it is not installed. */
export function redisServerPath(): string | null {
  try {
    return execFileSync('which', ['redis-server'], { encoding: 'utf8' }).trim() || null;
  } catch {
    return null;
  }
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts redis-server (`--port P --bind 127.0.0.1 --dir TMP --save '' --appendonly no`) and resolves
 * once it accepts connections. Retries on another port if the chosen one was taken meanwhile.
 */
export async function startRedisServer(): Promise<RedisServer> {
  const binary = redisServerPath();
  if (!binary) throw new Error('redis-server is not installed (apt-get install -y redis-server)');
  let lastError: Error | null = null;
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 'agent-machine-redis-'));
    const child = spawn(
      binary,
      ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      await waitForReady(child);
    } catch (error) {
      lastError = error as Error;
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      continue;
    }
    // Its log output is not needed any more, but must not fill the pipe.
    child.stdout?.resume();
    child.stderr?.resume();
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    return {
      host: '127.0.0.1',
      port,
      connection: { host: '127.0.0.1', port },
      stop: async () => {
        child.kill('SIGKILL');
        await exited;
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }
  throw new Error(`redis-server did not start: ${lastError?.message}`);
}

export function waitForReady(child: ChildProcess): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => done(new Error(`no "Ready" within 10 s: ${output}`)), 10_000);
    const done = (error?: Error) => {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.off('exit', onExit);
      if (error) reject(error);
      else resolve();
    };
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (output.includes('Ready to accept connections')) done();
    };
    const onExit = (code: number | null) => done(new Error(`redis-server exited (${code}): ${output}`));
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk;
    });
    child.on('exit', onExit);
  });
}
