/**
 * What an `onEvent` listener costs (issue #38): a run with one (as every chat and worker has)
 * against the same run without, 20-step runs of the scripted driver and of the model driver (one
 * `echo` call a step), in interleaved rounds, their order alternating; the ratio is the median of
 * the per-round ratios. Timed in this process's CPU time (`process.cpuUsage`), which other
 * processes on a loaded machine disturb far less than wall time. `npm run bench loop-listened` (also part of `npm run bench loop`).
 * Two more runs listened as a chat's are: inspected (how the chat handler found its run's actor
 * until #48) and given a run handle (how it gets it since).
 */
import { createAgent, ExecutionBudget } from '../src/index';
import { median, printTable } from './harness';
import { scriptedMockModel } from './peers/ai-sdk';
import { echo, libraryAgent, question } from './workload';

export default async function run(): Promise<void> {
  const steps = 20;
  const rounds = Number(process.env.ROUNDS ?? 33);
  const agents = {
    'scripted driver': libraryAgent(steps),
    'model driver': createAgent({
      model: scriptedMockModel(steps, { modelCalls: 0, toolCalls: 0 }),
      tools: { echo },
      budget: ExecutionBudget.unlimited(),
    }),
  };
  const rows: Record<string, string | number>[] = [];
  for (const [driver, agent] of Object.entries(agents)) {
    let events = 0;
    const onEvent = () => {
      events++;
    };
    const variants = {
      unlistened: () => agent.execute(question()),
      listened: () => agent.execute(question(), { onEvent }),
      // a chat's run (#48 item 3): found by an inspector until then, given a run handle since
      inspected: () => agent.execute(question(), { onEvent, inspect: () => {} }),
      handled: () => agent.execute(question(), Object.assign({ onEvent }, { runHandle: { attach() {} } })),
    };
    const times: Record<keyof typeof variants, number[]> = {
      unlistened: [],
      listened: [],
      inspected: [],
      handled: [],
    };
    const perRound = 20;
    for (let round = 0; round < rounds; round++) {
      const order = Object.entries(variants) as [keyof typeof variants, () => Promise<unknown>][];
      for (const [name, fn] of round % 2 ? order : order.reverse()) {
        const start = process.cpuUsage();
        for (let i = 0; i < perRound; i++) await fn();
        const used = process.cpuUsage(start);
        if (round >= 3) times[name].push((used.user + used.system) / perRound / steps);
      }
    }
    if (events === 0) throw new Error('the listener got no events');
    rows.push({
      driver,
      'unlistened CPU µs/step': median(times.unlistened),
      'listened CPU µs/step': median(times.listened),
      'listened / unlistened (per-round median)': median(
        times.listened.map((t, i) => t / (times.unlistened[i] as number)),
      ),
      'chat run, inspected / unlistened': median(
        times.inspected.map((t, i) => t / (times.unlistened[i] as number)),
      ),
      'chat run, run handle / unlistened': median(
        times.handled.map((t, i) => t / (times.unlistened[i] as number)),
      ),
    });
  }
  printTable(
    `onEvent listener, ${steps}-step runs (${rounds - 3} interleaved rounds of 20 runs, medians)`,
    rows,
  );
}
