/**
 * One version's chart floor alone, for a CPU profile: `V=6 N=100 RUNS=300 node --cpu-prof
 * --cpu-prof-dir=prof --import tsx profile.ts`, then `node top-functions.mjs prof/<file>`.
 */
import * as v6 from 'xstate';
import * as v5 from 'xstate5';
import { asState, chartFloor6 } from './chart-floor-v6';
import { runToOutcome as runToOutcome6 } from './chart6/run-to-outcome';
import { chartFloor as chartFloor5 } from './repo/bench/peers/chart-floor';
import { runToOutcome as runToOutcome5 } from './repo/src/runtime/run-to-outcome';

const steps = Number(process.env.N ?? 100);
const runs = Number(process.env.RUNS ?? 300);
const input = { state: asState({ calls: 0, tools: false }), reports: false };
const machine5 = chartFloor5(steps);
const machine6 = chartFloor6(steps);
const start = process.cpuUsage();
for (let i = 0; i < runs; i++) {
  if (process.env.V === '5') await runToOutcome5(v5.createActor(machine5, { input }) as never, undefined);
  else await runToOutcome6(v6.createActor(machine6, { input } as never));
}
const cpu = process.cpuUsage(start);
console.log(
  `v${process.env.V ?? 6}, N=${steps}: ${((cpu.user + cpu.system) / runs / steps).toFixed(1)} CPU µs a step`,
);
