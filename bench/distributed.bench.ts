/**
 * Agents on a BullMQ worker pool over Redis (src/distributed):
 *
 * 1. Sessions per second through 1, 2 and 4 worker processes on this machine: 60 short sessions
 *    (two tool steps and an answer, no delays) enqueued at once by a client, timed until the last
 *    final state is back; median of 3 rounds after a warm-up round. Each worker runs 8 jobs at once.
 *    Also, over the measured rounds: the workers' CPU time per session (utime + stime from
 *    /proc/<pid>/stat, Linux only) and Redis commands per step (`INFO commandstats`, the commands
 *    scripts run included; the client's and the idle workers' commands too).
 * 2. The cost of a Redis checkpoint per step: a 200-step run (scripted driver, one trivial tool call
 *    per step) checkpointed to a RedisSessionStore after every step, against the same run on an
 *    InMemorySessionStore and with no store; median of 5 runs.
 *
 * 3. (1) again on a 3-master Redis Cluster of its own (`redis-cli --cluster create` on loopback
 *    ports; the store's default prefix, the client and workers given an ioredis Cluster;
 *    BENCH_CLUSTER=0 leaves it out); commands counted on every master.
 *    The queue's keys share one slot (BullMQ's hash-tagged prefix), so one master takes them.
 *
 * It starts its own redis-server (127.0.0.1, a free port, a temporary directory, no persistence)
 * and stops it at the end; without redis-server it says so and returns. The worker processes are
 * this file run with `--worker <config>`.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Cluster, Redis } from 'ioredis';
import { z } from 'zod';
import { createAgentClient, createAgentWorker, RedisSessionStore } from '../src/distributed/index';
import {
  AgentState,
  createAgent,
  defineTool,
  ExecutionBudget,
  InMemorySessionStore,
  type SessionStore,
  scriptedDriver,
} from '../src/index';
import { startRedisCluster } from '../tests/distributed/support/redis-cluster';
import { median, now, printTable } from './harness';
import { redisServerPath, serveUntilTerminated, startRedis, waitForOutput } from './redis-process';

const SESSIONS = 60;
const ROUNDS = 3;
const WORKER_CONCURRENCY = Number(process.env.BENCH_WORKER_CONCURRENCY ?? 8);
const LONG_RUN_STEPS = 200;
const LONG_RUNS = 5;

interface WorkerConfig {
  /** One Redis: its port; a Cluster: its masters' ports (the startup nodes). */
  readonly ports: readonly number[];
  readonly cluster: boolean;
  readonly queueName: string;
  readonly prefix: string;
  readonly tag: string;
}

const add = defineTool({
  description: 'Add two numbers',
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  execute: async ({ a, b }) => a + b,
});

/** Two tool steps and an answer. */
function shortAgent() {
  return createAgent({
    driver: scriptedDriver([
      {
        toolCalls: [{ name: 'add', args: { a: 1, b: 2 }, id: 'c1' }],
        usage: { inputTokens: 10, outputTokens: 2 },
      },
      {
        toolCalls: [{ name: 'add', args: { a: 3, b: 4 }, id: 'c2' }],
        usage: { inputTokens: 10, outputTokens: 2 },
      },
      { text: 'done', usage: { inputTokens: 10, outputTokens: 2 } },
    ]),
    tools: { add },
  });
}

/** `steps - 1` tool steps and an answer. */
function longAgent(steps: number, store: SessionStore | undefined) {
  return createAgent({
    driver: scriptedDriver([
      (state) =>
        state.stepCount() < steps - 1
          ? {
              toolCalls: [{ name: 'add', args: { a: state.stepCount(), b: 1 }, id: `c${state.stepCount()}` }],
            }
          : { text: 'done' },
    ]),
    tools: { add },
    budget: new ExecutionBudget({ maxSteps: steps + 1 }),
    store,
  });
}

/** What a worker, the client and the store are given: options of one Redis, or an ioredis Cluster. */
function connectionOf(target: { ports: readonly number[]; cluster: boolean }) {
  const nodes = target.ports.map((port) => ({ host: '127.0.0.1', port }));
  return target.cluster ? new Cluster(nodes) : (nodes[0] as { host: string; port: number });
}

async function runWorker(config: WorkerConfig): Promise<void> {
  const connection = connectionOf(config);
  const store = new RedisSessionStore({ connection, prefix: config.prefix });
  const worker = await createAgentWorker({
    agents: { short: shortAgent() },
    store,
    connection,
    id: config.tag,
    queueName: config.queueName,
    concurrency: WORKER_CONCURRENCY,
  });
  serveUntilTerminated(config.tag, () => worker.close().then(() => store.close()));
}

const workerFlag = process.argv.indexOf('--worker');
if (workerFlag >= 0) await runWorker(JSON.parse(process.argv[workerFlag + 1] as string) as WorkerConfig);

export default async function run(): Promise<void> {
  const binary = redisServerPath();
  if (!binary) {
    console.log(
      'distributed.bench: redis-server is not installed, so this benchmark is skipped. Install it ' +
        '(Debian/Ubuntu: apt-get install -y redis-server) and run `npm run bench distributed`.',
    );
    return;
  }
  const redis = await startRedis(binary);
  try {
    await throughput({ ports: [redis.port], cluster: false }, 'one Redis');
    await checkpointCost(redis.port);
  } finally {
    await redis.stop();
  }
  if (process.env.BENCH_CLUSTER === '0') return;
  const cluster = await startRedisCluster();
  try {
    await throughput({ ports: cluster.nodes.map((n) => n.port), cluster: true }, 'a 3-master Redis Cluster');
  } finally {
    await cluster.stop();
  }
}

async function throughput(
  target: { ports: readonly number[]; cluster: boolean },
  where: string,
): Promise<void> {
  const rows: Record<string, string | number>[] = [];
  let single = 0;
  // every master's counts (a Cluster spreads the commands over its masters)
  const raws = target.ports.map((port) => new Redis({ host: '127.0.0.1', port }));
  for (const processes of [1, 2, 4]) {
    const queueName = `bench-${randomUUID()}`;
    // on a Cluster too: each session's keys carry its own hash tag after the prefix
    const prefix = `${queueName}:`;
    const workers = await Promise.all(
      Array.from({ length: processes }, (_, i) =>
        startWorker({ ...target, queueName, prefix, tag: `w${i + 1}` }),
      ),
    );
    const connection = connectionOf(target);
    const client = await createAgentClient({ connection, queueName });
    try {
      const round = async (label: string) => {
        const start = now();
        const jobs = await Promise.all(
          Array.from({ length: SESSIONS }, (_, i) =>
            client.execute({ agent: 'short', sessionId: `${label}-${i}`, message: 'add' }),
          ),
        );
        const results = await Promise.all(jobs.map((job) => job.finished({ timeoutMs: 60_000 })));
        const ms = now() - start;
        if (results.some((r) => r.status !== 'completed' || r.state.stepCount() !== 3))
          throw new Error('a benchmark session did not complete its 3 steps');
        return { ms, workers: new Set(results.map((r) => r.workerId)).size };
      };
      await round('warmup');
      const measured = [];
      const cpuBefore = workers.map((w) => w.cpuMs());
      await Promise.all(raws.map((raw) => raw.config('RESETSTAT')));
      for (let r = 0; r < ROUNDS; r++) measured.push(await round(`round-${r}`));
      const commands = (await Promise.all(raws.map(commandCount))).reduce((a, b) => a + b, 0);
      const cpuMs = workers.reduce((sum, w, i) => sum + w.cpuMs() - (cpuBefore[i] as number), 0);
      const ms = median(measured.map((m) => m.ms));
      const perSecond = (SESSIONS / ms) * 1000;
      if (processes === 1) single = perSecond;
      rows.push({
        'worker processes': processes,
        'ms for 60 sessions': ms,
        'sessions/s': perSecond,
        'steps/s': perSecond * 3,
        'vs 1 process': perSecond / single,
        'workers used': Math.min(...measured.map((m) => m.workers)),
        'worker CPU ms/session': Number.isNaN(cpuMs) ? 'n/a' : cpuMs / (SESSIONS * ROUNDS),
        'Redis commands/step': commands / (SESSIONS * ROUNDS * 3),
      });
    } finally {
      await client.close();
      if (connection instanceof Cluster) await connection.quit();
      await Promise.all(workers.map((w) => w.stop()));
    }
  }
  await Promise.all(raws.map((raw) => raw.quit()));
  printTable(
    `Sessions through a worker pool on ${where}: ${SESSIONS} sessions of 3 steps, ${WORKER_CONCURRENCY} jobs per worker (median of ${ROUNDS})`,
    rows,
  );
}

async function checkpointCost(port: number): Promise<void> {
  const question = () => AgentState.empty().withUserMessage('go');
  const redisStore = new RedisSessionStore({
    connection: { host: '127.0.0.1', port },
    prefix: `bench-${randomUUID()}:`,
  });
  const memoryStore = new InMemorySessionStore();
  try {
    const timeRuns = async (store: SessionStore | undefined, label: string) => {
      const agent = longAgent(LONG_RUN_STEPS, store);
      const once = async (i: number) => {
        const start = now();
        const state = await agent.execute(question(), store ? { sessionId: `${label}-${i}` } : {});
        const ms = now() - start;
        if (state.stepCount() !== LONG_RUN_STEPS || state.status() !== 'completed')
          throw new Error(`bad run: ${state.stepCount()} steps, ${state.status()}`);
        return ms;
      };
      await once(-1);
      const times: number[] = [];
      for (let i = 0; i < LONG_RUNS; i++) times.push(await once(i));
      return median(times);
    };
    const none = await timeRuns(undefined, 'none');
    const memory = await timeRuns(memoryStore, 'memory');
    const redis = await timeRuns(redisStore, 'redis');
    const perStep = (ms: number) => (ms * 1000) / LONG_RUN_STEPS;
    printTable(`Checkpoint per step: one ${LONG_RUN_STEPS}-step run (median of ${LONG_RUNS})`, [
      { store: 'none', 'ms per run': none, 'µs per step': perStep(none), 'checkpoint µs/step': 0 },
      {
        store: 'InMemorySessionStore',
        'ms per run': memory,
        'µs per step': perStep(memory),
        'checkpoint µs/step': perStep(memory - none),
      },
      {
        store: 'RedisSessionStore',
        'ms per run': redis,
        'µs per step': perStep(redis),
        'checkpoint µs/step': perStep(redis - none),
      },
    ]);
    console.log(
      `Redis over in-memory: ${perStep(redis - memory).toFixed(0)} µs per step ` +
        `(a save writes the whole state, so it grows with the history; loopback Redis)`,
    );
  } finally {
    await redisStore.close();
    await memoryStore.close();
  }
}

interface BenchWorker {
  /** CPU time (user + system) the process used so far, in ms (NaN where /proc is not there). */
  cpuMs(): number;
  stop(): Promise<void>;
}

/** Calls of every command since CONFIG RESETSTAT but the INFO that reads them. */
async function commandCount(raw: Redis): Promise<number> {
  const info = await raw.info('commandstats');
  let total = 0;
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm))
    if (match[1] !== 'info' && match[1] !== 'config|resetstat') total += Number(match[2]);
  return total;
}

/** utime + stime of a process from /proc/<pid>/stat, in ms (clock ticks of 10 ms). */
function processCpuMs(pid: number | undefined): number {
  const path = `/proc/${pid}/stat`;
  if (pid === undefined || !existsSync(path)) return Number.NaN;
  const fields = readFileSync(path, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function startWorker(config: WorkerConfig): Promise<BenchWorker> {
  const child = spawn(
    process.execPath,
    [
      // BENCH_WORKER_PROFILE=<dir>: a CPU profile of each worker process, written there when it stops
      ...(process.env.BENCH_WORKER_PROFILE
        ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_WORKER_PROFILE}`]
        : []),
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      '--worker',
      JSON.stringify(config),
    ],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  await waitForOutput(child, `ready ${config.tag}`, 30_000);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    cpuMs: () => processCpuMs(child.pid),
    stop: async () => {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
