/**
 * `npm run bench ledger`: what the budget ledger adds to each model call, and whether its cap
 * holds under concurrency.
 *
 * 1. Overhead per model call: the same runs (3 model calls each, one after another) with no
 *    ledger, with an InMemoryBudgetLedger and with a RedisBudgetLedger (a redis-server of its own
 *    on 127.0.0.1), each charging two scopes; the difference per call against no ledger, measured
 *    side by side in one process (medians of rounds).
 * 2. Exactness: RUNS runs at once across PROCESSES worker processes under one tenant cap of 100
 *    calls' worth: settled spend at most the cap, nothing left reserved, settled = the sum of the
 *    runs' real costs.
 *
 * Without redis-server the Redis parts say so and are skipped. LEDGER_ROUNDS, LEDGER_RUNS and
 * LEDGER_PROCESSES make it shorter or longer.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { type BudgetLedger, InMemoryBudgetLedger, RedisBudgetLedger } from '../src/index';
import { median, now, printTable } from './harness';
import { benchAgent, CALL_COST, hi } from './ledger-runs';
import { redisServerPath, startRedis, waitForOutput } from './redis-process';

const ROUNDS = Number(process.env.LEDGER_ROUNDS ?? 7);
const RUNS_PER_ROUND = 100;
const CALLS_PER_RUN = 3;
const RUNS = Number(process.env.LEDGER_RUNS ?? 1000);
const PROCESSES = Number(process.env.LEDGER_PROCESSES ?? 4);

/** This process's CPU time so far, in ms (other processes on a loaded machine do not count). */
const cpu = () => {
  const used = process.cpuUsage();
  return (used.user + used.system) / 1000;
};

/**
 * Wall and CPU milliseconds per model call of RUNS_PER_ROUND runs one after another, medians of
 * ROUNDS rounds. CPU time is this process's: the Redis server's work shows in wall time only.
 */
async function perCall(
  agents: Record<string, ReturnType<typeof benchAgent>>,
  scopes: readonly string[],
): Promise<Record<string, { wall: number; cpu: number }>> {
  const times: Record<string, { wall: number[]; cpu: number[] }> = Object.fromEntries(
    Object.keys(agents).map((k) => [k, { wall: [], cpu: [] }]),
  );
  // rounds interleave the variants: a slower moment of the machine hits them all alike
  for (let round = 0; round < ROUNDS + 1; round++) {
    for (const [name, agent] of Object.entries(agents)) {
      // every variant takes the same path (options other than a signal: a new actor per run)
      const options = name === 'no ledger' ? { id: 'bench' } : { id: 'bench', ledgerScopes: scopes };
      const [wall, used] = [now(), cpu()];
      for (let i = 0; i < RUNS_PER_ROUND; i++) await agent.execute(hi(), options);
      const calls = RUNS_PER_ROUND * CALLS_PER_RUN;
      // round 0 warms up
      if (round > 0) {
        times[name]?.wall.push((now() - wall) / calls);
        times[name]?.cpu.push((cpu() - used) / calls);
      }
    }
  }
  return Object.fromEntries(
    Object.entries(times).map(([k, v]) => [k, { wall: median(v.wall), cpu: median(v.cpu) }]),
  );
}

async function overhead(redis: RedisBudgetLedger | null): Promise<void> {
  const memory = new InMemoryBudgetLedger();
  await memory.setLimit('tenant:bench', { maxCost: 1e9 });
  await redis?.setLimit('tenant:bench', { maxCost: 1e9 });
  const agents: Record<string, ReturnType<typeof benchAgent>> = {
    'no ledger': benchAgent(undefined, CALLS_PER_RUN - 1),
    InMemoryBudgetLedger: benchAgent(memory, CALLS_PER_RUN - 1),
    ...(redis && { RedisBudgetLedger: benchAgent(redis, CALLS_PER_RUN - 1) }),
  };
  const ms = await perCall(agents, ['tenant:bench', 'user:bench']);
  const base = ms['no ledger'] as { wall: number; cpu: number };
  printTable(
    `Per model call (${RUNS_PER_ROUND} runs x ${CALLS_PER_RUN} calls, one after another, 2 scopes; medians of ${ROUNDS} rounds)`,
    Object.entries(ms).map(([variant, { wall, cpu }]) => ({
      variant,
      'wall µs': Math.round(wall * 1000),
      'wall overhead µs': Math.round((wall - base.wall) * 1000),
      'cpu µs': Math.round(cpu * 1000),
      'cpu overhead µs': Math.round((cpu - base.cpu) * 1000),
    })),
  );
}

function child(
  port: number,
  prefix: string,
  runs: number,
): { process: ChildProcess; result: Promise<string> } {
  const proc = spawn(
    process.execPath,
    ['--import', 'tsx', 'bench/ledger-runs.ts', JSON.stringify({ port, prefix, runs, scope: 'tenant:acme' })],
    { stdio: ['pipe', 'pipe', 'pipe'] },
  );
  let output = '';
  proc.stdout?.on('data', (d) => {
    output += d;
  });
  proc.stderr?.on('data', (d) => {
    output += d;
  });
  const result = new Promise<string>((resolve, reject) =>
    proc.once('exit', () => {
      const line = output.split('\n').find((l) => l.startsWith('result '));
      if (line) resolve(line.slice('result '.length));
      else reject(new Error(`a ledger process ended without a result: ${output}`));
    }),
  );
  return { process: proc, result };
}

async function exactness(port: number): Promise<void> {
  const prefix = `bench-${randomUUID()}`;
  const ledger: BudgetLedger = new RedisBudgetLedger({ connection: { host: '127.0.0.1', port }, prefix });
  const cap = 100 * CALL_COST;
  await ledger.setLimit('tenant:acme', { maxCost: cap });
  const children = Array.from({ length: PROCESSES }, () => child(port, prefix, Math.ceil(RUNS / PROCESSES)));
  try {
    await Promise.all(children.map((c) => waitForOutput(c.process, 'ready', 30_000)));
    const start = now();
    for (const c of children) c.process.stdin?.write('go\n');
    const outcomes = (await Promise.all(children.map((c) => c.result))).flatMap(
      (json) => JSON.parse(json) as { status: string; scope: string | null; cost: number }[],
    );
    const seconds = (now() - start) / 1000;
    const usage = await ledger.usage('tenant:acme');
    const real = outcomes.reduce((sum, o) => sum + o.cost, 0);
    printTable(
      `${outcomes.length} runs at once across ${PROCESSES} processes, one Redis, cap 100 calls' worth`,
      [
        {
          'spent / cap': Number((usage.cost / cap).toFixed(4)),
          'reserved at end': usage.reservedCost,
          'settled - sum of real costs': Number((usage.cost - real).toExponential(2)),
          completed: outcomes.filter((o) => o.status === 'completed').length,
          'stopped by the ledger': outcomes.filter((o) => o.scope === 'tenant:acme').length,
          seconds: Number(seconds.toFixed(1)),
          'cap held': usage.cost <= cap && usage.reservedCost === 0 ? 'yes' : 'NO',
        },
      ],
    );
  } finally {
    for (const c of children) if (c.process.exitCode === null) c.process.kill('SIGKILL');
    await ledger.close();
  }
}

export default async function ledgerBench(): Promise<void> {
  const binary = redisServerPath();
  if (!binary) {
    console.log('ledger.bench: redis-server is not installed: the Redis figures are skipped.');
    await overhead(null);
    return;
  }
  const server = await startRedis(binary);
  const redis = new RedisBudgetLedger({
    connection: { host: '127.0.0.1', port: server.port },
    prefix: `bench-${randomUUID()}`,
  });
  try {
    await overhead(redis);
    if (PROCESSES > 0 && RUNS > 0) await exactness(server.port);
  } finally {
    await redis.close();
    await server.stop();
  }
}
