import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Cluster, Redis } from 'ioredis';
import { freePort, redisServerPath, waitForReady } from './redis-server';

const run = promisify(execFile);

/**
 * A Redis Cluster of our own: `masters` redis-server processes on 127.0.0.1 (free ports, one
 * temporary directory, no persistence), joined with `redis-cli --cluster create` (no replicas).
 */
export interface RedisCluster {
  /** The masters' addresses, the cluster's startup nodes. */
  readonly nodes: readonly { readonly host: '127.0.0.1'; readonly port: number }[];
  /** A new ioredis Cluster client on it (the caller closes it). */
  client(): Cluster;
  /** How many keys matching `pattern` each master holds, by port. */
  keysPerMaster(pattern: string): Promise<Map<number, number>>;
  /** Kills the servers and removes the directory. */
  stop(): Promise<void>;
}

/** Ports P such that P and P + 10000 (the cluster bus) are both free now. */
async function freeClusterPort(taken: Set<number>): Promise<number> {
  for (;;) {
    const port = await freePort();
    if (port + 10_000 > 65_535 || taken.has(port)) continue;
    const bus = await new Promise<boolean>((resolve) => {
      const probe = createServer();
      probe.once('error', () => resolve(false));
      probe.listen(port + 10_000, '127.0.0.1', () => probe.close(() => resolve(true)));
    });
    if (bus) return port;
  }
}

/** Polls `cluster info` on every node until each says cluster_state:ok (a safety net of 30 s). */
async function untilClusterOk(ports: readonly number[]): Promise<void> {
  const clients = ports.map((port) => new Redis({ host: '127.0.0.1', port, lazyConnect: true }));
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const infos = await Promise.all(clients.map((c) => c.cluster('INFO') as Promise<string>));
      if (infos.every((info) => info.includes('cluster_state:ok'))) return;
      if (Date.now() > deadline) throw new Error(`the cluster is not ok after 30 s:\n${infos.join('\n')}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    for (const client of clients) client.disconnect();
  }
}

/**
 * Starts `masters` (default 3) redis-servers with `--cluster-enabled yes`, creates the cluster
 * with redis-cli and resolves once every node says cluster_state:ok.
 */
export async function startRedisCluster(masters = 3): Promise<RedisCluster> {
  const binary = redisServerPath();
  if (!binary) throw new Error('redis-server is not installed (apt-get install -y redis-server)');
  const dir = mkdtempSync(join(tmpdir(), 'agent-machine-cluster-'));
  const children: ChildProcess[] = [];
  const exits: Promise<void>[] = [];
  const stop = async () => {
    for (const child of children) child.kill('SIGKILL');
    await Promise.all(exits);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const ports: number[] = [];
    const taken = new Set<number>();
    for (let i = 0; i < masters; i++) {
      const port = await freeClusterPort(taken);
      taken.add(port);
      const child = spawn(
        binary,
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--dir',
          dir,
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          `nodes-${port}.conf`,
          '--cluster-node-timeout',
          '5000',
          '--save',
          '',
          '--appendonly',
          'no',
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      children.push(child);
      exits.push(
        new Promise<void>((resolve) => {
          if (child.exitCode !== null || child.signalCode !== null) resolve();
          else child.once('exit', () => resolve());
        }),
      );
      await waitForReady(child);
      child.stdout?.resume();
      child.stderr?.resume();
      ports.push(port);
    }
    await run(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...ports.map((port) => `127.0.0.1:${port}`),
        '--cluster-replicas',
        '0',
        '--cluster-yes',
      ],
      { timeout: 30_000 },
    );
    await untilClusterOk(ports);
    const nodes = ports.map((port) => ({ host: '127.0.0.1' as const, port }));
    return {
      nodes,
      client: () => new Cluster(nodes),
      async keysPerMaster(pattern) {
        const counts = new Map<number, number>();
        for (const port of ports) {
          const node = new Redis({ host: '127.0.0.1', port });
          try {
            let cursor = '0';
            let count = 0;
            do {
              const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
              count += keys.length;
              cursor = next;
            } while (cursor !== '0');
            counts.set(port, count);
          } finally {
            node.disconnect();
          }
        }
        return counts;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
