/**
 * Steps per second of the agent machine (scripted driver, one trivial tool) next to a plain loop
 * doing the same state updates (the floor), for runs of 10 to 10,000 steps; and 1,000 agents of
 * 5 steps run concurrently (time and heap).
 */

import { createAgent, type Hook } from '../src/index';
import { collectGarbage, heapGrowth, measure, median, now, printTable } from './harness';
import { libraryAgent, plainLoop, question } from './workload';

export default async function run(): Promise<void> {
  const rows: Record<string, string | number>[] = [];
  for (const steps of [10, 100, 1_000, 10_000]) {
    const runs = steps >= 10_000 ? 3 : 5;
    const repeat = Math.max(1, Math.floor(1_000 / steps));
    const agent = libraryAgent(steps);
    const check = await agent.execute(question());
    if (check.stepCount() !== steps || check.status() !== 'completed')
      throw new Error(`bad run: ${check.stepCount()} steps`);
    collectGarbage();
    const machineMs =
      (await measure(
        async () => {
          for (let i = 0; i < repeat; i++) await agent.execute(question());
        },
        { runs },
      )) / repeat;
    collectGarbage();
    const floorMs =
      (await measure(
        async () => {
          for (let i = 0; i < repeat; i++) await plainLoop(steps);
        },
        { runs },
      )) / repeat;
    rows.push({
      steps,
      'machine ms/run': machineMs,
      'machine µs/step': (machineMs * 1000) / steps,
      'machine steps/s': Math.round((steps / machineMs) * 1000),
      'floor µs/step': (floorMs * 1000) / steps,
      'ratio to floor': machineMs / floorMs,
    });
  }
  printTable('One agent, N steps (median of 5 runs; 3 at 10,000)', rows);

  // What hooks cost: a plain-function beforeStep + afterStep hook, and the same returning promises.
  // Interleaved rounds of 10 runs of 100 steps each, so that load hits the three alike.
  const sync: Hook = { name: 'sync', beforeStep: () => undefined, afterStep: () => undefined };
  const async: Hook = { name: 'async', beforeStep: async () => undefined, afterStep: async () => undefined };
  const variants = (
    [
      ['none', []],
      ['sync beforeStep + afterStep', [sync]],
      ['async beforeStep + afterStep', [async]],
    ] as const
  ).map(([label, hooks]) => ({
    label,
    agent: createAgent({ ...libraryAgent(100).definition, hooks }),
    times: [] as number[],
  }));
  for (let round = 0; round < 23; round++) {
    for (const v of variants) {
      const start = now();
      for (let i = 0; i < 10; i++) await v.agent.execute(question());
      if (round >= 3) v.times.push((now() - start) / 10);
    }
  }
  const hookRows = variants.map((v) => ({ hooks: v.label, 'µs/step': (median(v.times) * 1000) / 100 }));
  printTable('Hooks, 100-step runs (median of 20 interleaved rounds)', hookRows);

  const agent = libraryAgent(5);
  const concurrent = async () => {
    const states = await Promise.all(Array.from({ length: 1_000 }, () => agent.execute(question())));
    if (states.some((s) => s.stepCount() !== 5)) throw new Error('a concurrent run did not finish');
    return states;
  };
  await concurrent();
  const ms = await measure(concurrent, { runs: 3, warmup: 1 });
  const { mib } = await heapGrowth(concurrent);
  const floorMs = await measure(() => Promise.all(Array.from({ length: 1_000 }, () => plainLoop(5))), {
    runs: 3,
    warmup: 1,
  });
  printTable('1,000 agents of 5 steps, concurrently (median of 3)', [
    {
      'machine ms': ms,
      'machine µs/step': (ms * 1000) / 5000,
      'heap MiB (final states kept)': mib,
      'floor ms': floorMs,
      'ratio to floor': ms / floorMs,
    },
  ]);
}
