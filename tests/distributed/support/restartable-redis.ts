import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, redisServerPath, waitForReady } from './redis-server';

/** How a restartable server persists: nothing, or an append-only file fsynced every second or every write. */
export type RedisPersistence = 'none' | 'everysec' | 'always';

/** A redis-server of our own that can crash (SIGKILL) and start again on the same port and directory. */
export interface RestartableRedis {
  readonly port: number;
  readonly connection: { host: string; port: number };
  /** SIGKILLs the server (no shutdown save, no final fsync), then starts it again; resolves once it is ready. */
  crashAndRestart(): Promise<void>;
  /** Kills the server and removes its directory. */
  stop(): Promise<void>;
}

/**
 * Starts redis-server on 127.0.0.1, a free port and a temporary directory, with no RDB snapshots and
 * the given persistence (`--appendonly yes --appendfsync <mode>`, or `--appendonly no`).
 */
export async function startRestartableRedis(persistence: RedisPersistence): Promise<RestartableRedis> {
  const binary = redisServerPath();
  if (!binary) throw new Error('redis-server is not installed (apt-get install -y redis-server)');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'agent-machine-restart-'));
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', ''];
  args.push(
    ...(persistence === 'none'
      ? ['--appendonly', 'no']
      : ['--appendonly', 'yes', '--appendfsync', persistence]),
  );
  const start = async (): Promise<{ child: ChildProcess; exited: Promise<void> }> => {
    const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    try {
      await waitForReady(child);
    } catch (error) {
      child.kill('SIGKILL');
      await exited;
      throw error;
    }
    child.stdout?.resume();
    child.stderr?.resume();
    return { child, exited };
  };
  let current = await start();
  const kill = async () => {
    current.child.kill('SIGKILL');
    await current.exited;
  };
  return {
    port,
    connection: { host: '127.0.0.1', port },
    crashAndRestart: async () => {
      await kill();
      current = await start();
    },
    stop: async () => {
      await kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
