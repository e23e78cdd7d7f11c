/**
 * bench/peers/chart-floor.ts ("agentLoop chart alone") on XState 5 and on the XState 6 port
 * (chart6/), side by side in one process: the real chart with its real workers (`stepWorker`,
 * answering on a promise turn) and runToOutcome, every action that does the agent's work a no-op,
 * the state a two-field stub, the guards that read the state replaced to follow the workload's path
 * (N model calls, a tool call after each of the first N - 1, then the outcome).
 *
 *   node --expose-gc --import tsx chart-floor.ts     (ROUNDS=, SAMPLE_MS=, STEPS= to change)
 */
import * as v6 from 'xstate';
import * as v5 from 'xstate5';
import { asState, chartFloor6, counters, stub } from './chart-floor-v6';
import { agentLoop as agentLoop6 } from './chart6/agentLoop';
import { runToOutcome as runToOutcome6 } from './chart6/run-to-outcome';
import { compare, opRow, printTable, type Variant, versionRow, warmUp } from './harness';
import { chartFloor as chartFloor5 } from './repo/bench/peers/chart-floor';
import { agentLoop as agentLoop5 } from './repo/machines/agentLoop';
import { runToOutcome as runToOutcome5 } from './repo/src/runtime/run-to-outcome';
import type { AgentState } from './repo/src/state/agent-state';

function check(state: AgentState, steps: number): void {
  if (stub(state).calls !== steps) throw new Error(`ran ${stub(state).calls} of ${steps} steps`);
}

const start = asState({ calls: 0, tools: false });
const input = { state: start, reports: false };
const STEPS = (process.env.STEPS ?? '1,5,10,100,1000').split(',').map(Number);
function variants(steps: number): Variant[] {
  const machine5 = chartFloor5(steps);
  const machine6 = chartFloor6(steps);
  return [
    {
      name: 'v5',
      run: async () =>
        check(await runToOutcome5(v5.createActor(machine5, { input }) as never, undefined), steps),
    },
    {
      name: 'v6',
      run: async () => check(await runToOutcome6(v6.createActor(machine6, { input } as never)), steps),
    },
  ];
}
const rows: Record<string, string | number>[] = [];
await warmUp(variants(10));
for (const steps of STEPS) {
  const [r5, r6] = await compare(variants(steps));
  rows.push(versionRow(steps, r5!, r6!));
}
printTable(
  'agentLoop chart alone (bench/peers/chart-floor.ts workload): CPU µs (process.cpuUsage), medians of interleaved samples',
  rows,
);

const [l5, l6] = await compare([
  { name: 'v5', run: () => v5.createActor(agentLoop5, { input }).start().stop() },
  {
    name: 'v6',
    run: () =>
      v6
        .createActor(agentLoop6, { input } as never)
        .start()
        .stop(),
  },
]);
printTable('The agent actor alone: creation + start + stop, resting in pending: CPU µs', [opRow(l5!, l6!)]);
console.log(`v6 floor: model calls ${counters.modelCalls}, tool calls ${counters.toolCalls}`);
