/**
 * `npm run matrix:sim`: the crash simulation (crash-simulation.ts) until SIM_CRASHES simulated
 * crashes (default 100,000), or over SIM_SCRIPTS seeded scripts when given, from SIM_SEED (default
 * 49), split over SIM_WORKERS child processes (default 2; each runs every SIM_WORKERS-th script and
 * its share of the crashes); SIM_ROOT_ONLY=1 leaves subagents out of the scripts. Prints progress,
 * each crash a count was found in (script number, write, landed or not), the reconcile line, and
 * last the counts line; exits non-zero when a count is not 0.
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import {
  addCounts,
  countsLine,
  failures,
  noCounts,
  runCrashSimulation,
  type SimulationCounts,
} from './crash-simulation';

const seed = Number(process.env.SIM_SEED ?? 49);
const scripts = process.env.SIM_SCRIPTS === undefined ? undefined : Number(process.env.SIM_SCRIPTS);
const crashes = Number(process.env.SIM_CRASHES ?? 100_000);
const workers = Math.max(1, Number(process.env.SIM_WORKERS ?? 2));
const rootOnly = process.env.SIM_ROOT_ONLY === '1';
const shard = process.env.SIM_SHARD;

if (shard !== undefined) {
  // a worker: its share of the scripts, its counts sent to the parent
  let next = 2_500;
  const counts = await runCrashSimulation({
    seed,
    scripts,
    crashes,
    shard: Number(shard),
    shards: workers,
    rootOnly,
    onFailure: (failure) => console.log(`FAILED ${JSON.stringify(failure)}`),
    onProgress: (c, ran) => {
      if (c.crashes < next) return;
      next += 2_500;
      const cpu = process.cpuUsage();
      console.log(
        `  worker ${shard}: ${ran} scripts, ${((cpu.user + cpu.system) / 1e6).toFixed(0)} CPU s, ${countsLine(c)}`,
      );
    },
  });
  process.send?.(counts, () => process.exit(0));
} else {
  const began = Date.now();
  console.log(
    `crash simulation: SIM_SEED=${seed}, ${scripts === undefined ? `${crashes} crashes` : `${scripts} scripts`}, ` +
      `${workers} worker processes${rootOnly ? ', root-only scripts' : ', with subagents'}`,
  );
  const self = fileURLToPath(import.meta.url);
  const results = await Promise.all(
    Array.from(
      { length: workers },
      (_, i) =>
        new Promise<SimulationCounts>((resolve, reject) => {
          const child = fork(self, [], {
            execArgv: process.execArgv,
            env: { ...process.env, SIM_SHARD: String(i) },
          });
          let counts: SimulationCounts | null = null;
          child.on('message', (message) => {
            counts = message as SimulationCounts;
          });
          child.on('exit', (code, signal) =>
            counts
              ? resolve(counts)
              : reject(new Error(`worker ${i} ended (${signal ?? code}) without its counts`)),
          );
        }),
    ),
  );
  const total = results.reduce(addCounts, noCounts());
  console.log(`${((Date.now() - began) / 1000).toFixed(0)} s`);
  console.log(
    `${total.subagentCrashes} crashes of scripts with subagents, ${total.reconcileAnswers} reconcile answers, ` +
      `${total.reconcilableAskedOfAPerson} interrupted calls of a tool with a reconcile asked of a person`,
  );
  console.log(countsLine(total));
  process.exitCode = failures(total) > 0 ? 1 : 0;
}
