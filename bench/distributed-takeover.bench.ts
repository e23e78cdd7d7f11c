/**
 * How long a BullMQ worker pool takes to resume the session of a worker that died, against each of
 * the worker's timing options (createAgentWorker: lockDurationMs, stalledIntervalMs,
 * sessionLockTtlMs, busyRetryDelayMs, maxStalledCount), for BullMQ's old defaults and ours.
 *
 * A trial has a queue of its own and two worker processes on one redis-server. The victim takes a
 * session that never ends (a step every 200 ms, each checkpointed); the survivor is started idle;
 * after a delay the victim is SIGKILLed, and the trial measures the time from the kill to the
 * survivor's first model call in that session (resumed from the last checkpoint). The kill delays
 * of a setting's trials are spread evenly over the longest of its periods (stalled check, job lock
 * renewal, session lock renewal), so the kill lands at every phase of them; its trials run at once.
 * "Busy retries": times a survivor found the session still locked and put the job back, delayed.
 * Rows with 2 deaths kill the survivor too, once it runs the session, and a third worker must
 * resume it (what maxStalledCount allows); their times are the second take-over's.
 *
 * `npm run bench distributed-takeover` (TAKEOVER_TRIALS=n: trials per setting; TAKEOVER_ONLY=text:
 * only the settings whose label contains it).
 * It starts its own redis-server and stops it at the end; without redis-server it says so and returns.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { QueueEvents } from 'bullmq';
import { z } from 'zod';
import { createAgentClient, createAgentWorker, RedisSessionStore } from '../src/distributed/index';
import { WORKER_TIMING_DEFAULTS } from '../src/distributed/worker-options';
import { abortableDelay } from '../src/drivers/abortable-delay';
import { createAgent, defineTool, ExecutionBudget, scriptedDriver } from '../src/index';
import { median, now, printTable } from './harness';
import { redisServerPath, serveUntilTerminated, startRedis } from './redis-process';

const TRIALS = Number(process.env.TAKEOVER_TRIALS ?? 4);
const ONLY = process.env.TAKEOVER_ONLY;
const STEP_MS = 200;

interface Timings {
  readonly lockDurationMs: number;
  readonly stalledIntervalMs: number;
  readonly sessionLockTtlMs: number;
  readonly busyRetryDelayMs: number;
  readonly maxStalledCount: number;
}

interface WorkerConfig {
  readonly port: number;
  readonly queueName: string;
  readonly prefix: string;
  readonly tag: string;
  readonly timings: Timings;
}

const OLD: Timings = {
  lockDurationMs: 30_000,
  stalledIntervalMs: 30_000,
  sessionLockTtlMs: 30_000,
  busyRetryDelayMs: 500,
  maxStalledCount: 1,
};
const NEW: Timings = WORKER_TIMING_DEFAULTS;

interface Setting {
  readonly label: string;
  readonly timings: Timings;
  /** Workers killed one after the other while they run the session (default 1). */
  readonly deaths?: number;
}

const SETTINGS: readonly Setting[] = [
  { label: 'old defaults', timings: OLD },
  { label: 'new defaults', timings: NEW },
  { label: 'lockDurationMs 4000', timings: { ...NEW, lockDurationMs: 4_000 } },
  { label: 'lockDurationMs 6000', timings: { ...NEW, lockDurationMs: 6_000 } },
  { label: 'lockDurationMs 15000', timings: { ...NEW, lockDurationMs: 15_000 } },
  { label: 'stalledIntervalMs 2000', timings: { ...NEW, stalledIntervalMs: 2_000 } },
  { label: 'stalledIntervalMs 5000', timings: { ...NEW, stalledIntervalMs: 5_000 } },
  { label: 'sessionLockTtlMs 3000', timings: { ...NEW, sessionLockTtlMs: 3_000 } },
  { label: 'sessionLockTtlMs 12000', timings: { ...NEW, sessionLockTtlMs: 12_000 } },
  {
    label: 'sessionLockTtlMs 12000, busyRetryDelayMs 100',
    timings: { ...NEW, sessionLockTtlMs: 12_000, busyRetryDelayMs: 100 },
  },
  {
    label: 'sessionLockTtlMs 12000, busyRetryDelayMs 2000',
    timings: { ...NEW, sessionLockTtlMs: 12_000, busyRetryDelayMs: 2_000 },
  },
  { label: 'maxStalledCount 0', timings: { ...NEW, maxStalledCount: 0 } },
  { label: 'new defaults, 2 deaths', timings: NEW, deaths: 2 },
  { label: 'maxStalledCount 2, 2 deaths', timings: { ...NEW, maxStalledCount: 2 }, deaths: 2 },
];

/** A session that never ends: each step calls `wait` (STEP_MS); each model call is printed. */
function endlessAgent(tag: string) {
  const wait = defineTool({
    description: 'Waits',
    inputSchema: z.object({}),
    execute: async (_args, { signal }) => {
      await abortableDelay(STEP_MS, signal);
      return 'waited';
    },
  });
  return createAgent({
    driver: scriptedDriver([
      (state) => {
        process.stdout.write(`step ${tag} ${state.stepCount()}\n`);
        return { toolCalls: [{ name: 'wait', args: {}, id: `c${state.stepCount()}` }] };
      },
    ]),
    tools: { wait },
    budget: ExecutionBudget.unlimited(),
  });
}

async function runWorker(config: WorkerConfig): Promise<void> {
  const connection = { host: '127.0.0.1', port: config.port };
  const store = new RedisSessionStore({ connection, prefix: config.prefix });
  const worker = await createAgentWorker({
    agents: { endless: () => endlessAgent(config.tag) },
    store,
    connection,
    id: config.tag,
    queueName: config.queueName,
    ...config.timings,
    // A job lock that could not be renewed is the victim's, after the kill: expected here.
    onError: () => undefined,
  });
  serveUntilTerminated(config.tag, () => worker.close().then(() => store.close()));
}

const workerFlag = process.argv.indexOf('--takeover-worker');
if (workerFlag >= 0) await runWorker(JSON.parse(process.argv[workerFlag + 1] as string) as WorkerConfig);

export default async function run(): Promise<void> {
  const binary = redisServerPath();
  if (!binary) {
    console.log(
      'distributed-takeover.bench: redis-server is not installed, so this benchmark is skipped. ' +
        'Install it (Debian/Ubuntu: apt-get install -y redis-server) and run `npm run bench distributed-takeover`.',
    );
    return;
  }
  const redis = await startRedis(binary);
  const rows: Record<string, string | number>[] = [];
  try {
    for (const { label, timings, deaths = 1 } of SETTINGS.filter((s) => !ONLY || s.label.includes(ONLY))) {
      const window = Math.max(
        timings.stalledIntervalMs,
        timings.lockDurationMs / 2,
        timings.sessionLockTtlMs / 3,
      );
      const trials = await Promise.all(
        Array.from({ length: TRIALS }, (_, i) =>
          trial(redis.port, timings, ((i + 0.5) / TRIALS) * window, deaths),
        ),
      );
      const resumed = trials.flatMap((t) => (t.kind === 'resumed' ? [t.ms] : []));
      const others = trials.flatMap((t) => (t.kind === 'resumed' ? [] : [t.detail]));
      const row = {
        setting: label,
        lockDurationMs: timings.lockDurationMs,
        stalledIntervalMs: timings.stalledIntervalMs,
        sessionLockTtlMs: timings.sessionLockTtlMs,
        busyRetryDelayMs: timings.busyRetryDelayMs,
        maxStalledCount: timings.maxStalledCount,
        deaths,
        'resumed in s: min': resumed.length ? Math.min(...resumed) / 1000 : '-',
        median: resumed.length ? median(resumed) / 1000 : '-',
        max: resumed.length ? Math.max(...resumed) / 1000 : '-',
        'busy retries': trials.reduce((sum, t) => sum + t.busyRetries, 0),
        outcome: `${resumed.length}/${trials.length} resumed${others.length ? `; ${[...new Set(others)].join('; ')}` : ''}`,
      };
      rows.push(row);
      console.log(`  ${label}: ${resumed.map((ms) => (ms / 1000).toFixed(1)).join(', ')} s ${row.outcome}`);
    }
  } finally {
    await redis.stop();
  }
  printTable(
    `Take-over of a SIGKILLed worker's session: seconds from the kill to the next model call on another worker (${TRIALS} trials per setting)`,
    rows,
  );
}

type TrialOutcome = (
  | { readonly kind: 'resumed'; readonly ms: number }
  | { readonly kind: 'failed' | 'gave up'; readonly detail: string }
) & { readonly busyRetries: number };

/**
 * One trial: the session starts on worker w0; then `deaths` times, the next worker is started,
 * the one running the session is SIGKILLed after `killDelayMs`, and the next one must resume it.
 * `ms` is the last take-over's time.
 */
async function trial(
  port: number,
  timings: Timings,
  killDelayMs: number,
  deaths: number,
): Promise<TrialOutcome> {
  const queueName = `takeover-${randomUUID()}`;
  const connection = { host: '127.0.0.1', port };
  const config = (tag: string): WorkerConfig => ({ port, queueName, prefix: `${queueName}:`, tag, timings });
  const events = new QueueEvents(queueName, { connection });
  let busyRetries = 0;
  let killed = false;
  events.on('delayed', () => {
    if (killed) busyRetries++;
  });
  await events.waitUntilReady();
  const client = await createAgentClient({ connection, queueName });
  const workers: BenchWorker[] = [];
  try {
    let running = await startWorker(config('w0'));
    workers.push(running);
    // The session id is the queue's: the session locks of all queues share one key prefix.
    const job = await client.execute({ agent: 'endless', sessionId: queueName, message: 'go' });
    const giveUpMs = 3 * (timings.lockDurationMs + timings.stalledIntervalMs) + timings.sessionLockTtlMs;
    const ended = job.finished().then(
      () => 'finished',
      (error: Error & { reason?: string }) => error.reason ?? error.message,
    );
    await running.line('step w0 ', 30_000);
    let ms = 0;
    for (let death = 1; death <= deaths; death++) {
      const next = await startWorker(config(`w${death}`));
      workers.push(next);
      await sleep(killDelayMs);
      const killedAt = now();
      killed = true;
      await running.kill();
      const outcome = await Promise.race([
        next.line(`step w${death} `, giveUpMs).then(
          () => ({ kind: 'resumed' as const, ms: now() - killedAt }),
          () => ({ kind: 'gave up' as const, detail: `not resumed within ${giveUpMs / 1000} s` }),
        ),
        ended.then((detail) => ({
          kind: 'failed' as const,
          detail: `death ${death}: job failed: ${detail}`,
        })),
      ]);
      if (outcome.kind !== 'resumed') return { ...outcome, busyRetries };
      ms = outcome.ms;
      running = next;
    }
    return { kind: 'resumed', ms, busyRetries };
  } finally {
    await Promise.all(workers.map((w) => w.kill()));
    await client.close();
    await events.close();
  }
}

interface BenchWorker {
  /** Resolves once the worker has printed a line starting with `text` (now or earlier). */
  line(text: string, timeoutMs: number): Promise<void>;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>;
}

async function startWorker(config: WorkerConfig): Promise<BenchWorker> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', fileURLToPath(import.meta.url), '--takeover-worker', JSON.stringify(config)],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let output = '';
  const waiting = new Set<() => void>();
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk;
    for (const check of waiting) check();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk;
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const worker: BenchWorker = {
    line: (text, timeoutMs) =>
      new Promise((resolve, reject) => {
        const check = () => {
          if (!output.includes(`\n${text}`) && !output.startsWith(text)) return;
          done();
          resolve();
        };
        const timer = setTimeout(() => {
          done();
          reject(new Error(`${config.tag}: no "${text}" within ${timeoutMs} ms: ${output.slice(-2000)}`));
        }, timeoutMs);
        const done = () => {
          clearTimeout(timer);
          waiting.delete(check);
        };
        waiting.add(check);
        check();
      }),
    kill: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
  await worker.line(`ready ${config.tag}`, 30_000);
  return worker;
}
