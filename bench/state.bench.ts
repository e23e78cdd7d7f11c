/**
 * The cost of appending a step must not grow with the history. Builds a 10,000-step state one
 * step at a time and reports the time per append in the window of appends ending at 100, 1,000 and
 * 10,000 steps (window: the last min(N, 1,000) appends, so a single garbage collection does not
 * dominate a figure), the whole-build time per step, and the JSON round trip of a 1,000-step state.
 */
import { AgentState } from '../src/index';
import { collectGarbage, measure, median, now, printTable } from './harness';
import { appendToolStep } from './workload';

const windowOf = (size: number) => Math.min(size, 1_000);

function build(
  steps: number,
  sizes: readonly number[] = [],
): { state: AgentState; perAppendUs: Map<number, number> } {
  let state = AgentState.empty().withSystemPrompt('bench').withUserMessage('go').withExecutionStarted();
  const perAppendUs = new Map<number, number>();
  const starts = new Map<number, number>();
  for (let i = 0; i < steps; i++) {
    const size = i + 1;
    for (const s of sizes) if (size === s - windowOf(s) + 1) starts.set(s, now());
    state = appendToolStep(state, i);
    if (sizes.includes(size))
      perAppendUs.set(size, ((now() - (starts.get(size) ?? 0)) * 1000) / windowOf(size));
  }
  return { state, perAppendUs };
}

export default async function run(): Promise<void> {
  const sizes = [100, 1_000, 10_000];
  const samples = new Map<number, number[]>(sizes.map((s) => [s, []]));
  build(10_000); // warm up
  for (let r = 0; r < 5; r++) {
    collectGarbage();
    for (const [size, us] of build(10_000, sizes).perAppendUs) samples.get(size)?.push(us);
  }
  const base = median(samples.get(100) ?? []);
  printTable(
    'Append one step (median of 5 builds of a 10,000-step state; window: the last min(N, 1,000) appends up to N)',
    sizes.map((size) => {
      const us = median(samples.get(size) ?? []);
      return { 'steps so far': size, 'µs per append': us, 'ratio to 100': us / base };
    }),
  );

  const whole: { n: number; us: number }[] = [];
  for (const n of [100, 10_000]) {
    whole.push({ n, us: ((await measure(() => build(n), { runs: 3, warmup: 1 })) * 1000) / n });
  }
  printTable(
    'Whole build, µs per step (median of 3)',
    whole.map(({ n, us }) => ({ steps: n, 'µs per step': us, 'ratio to 100': us / (whole[0]?.us ?? us) })),
  );

  const { state } = build(1_000);
  let json = '';
  const toJsonMs = await measure(() => {
    json = JSON.stringify(state);
  });
  const fromJsonMs = await measure(() => AgentState.fromJSON(JSON.parse(json)));
  printTable('JSON round trip of a 1,000-step state (median of 5)', [
    { 'toJSON + stringify ms': toJsonMs, 'parse + fromJSON ms': fromJsonMs, 'JSON KiB': json.length / 1024 },
  ]);
}
