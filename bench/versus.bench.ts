/**
 * This checkout against another checkout of the library, in one process, so that a change is
 * measured side by side with what it changed: `BASE=<dir> npm run bench versus` (make the other one
 * with `git worktree add <dir> <rev>` and link its node_modules to this one's). Both run the peers'
 * model-driver workload (N-step runs over the AI SDK's MockLanguageModelV4, one `echo` tool call per
 * step), with `generateText` alongside; rounds are interleaved, their order alternating. `STEPS=`
 * picks the run lengths (default 1,5,20); `ROUNDS=` the rounds (default 31); `CALL_SETTINGS=1` gives
 * both agents call settings (`modelOptions.callOptions`: temperature, maxOutputTokens), as most apps
 * set; `ON_EVENT=1` runs them with an `onEvent` listener, as an app that shows progress does. Skipped
 * without BASE.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as current from '../src/index';
import { median, now, printTable } from './harness';
import { aiSdkAdapter, scriptedMockModel } from './peers/ai-sdk';
import { echo } from './workload';

type Library = Pick<typeof current, 'AgentState' | 'createAgent' | 'ExecutionBudget'>;

const listener = process.env.ON_EVENT ? { onEvent: () => {} } : {};

function runner(library: Library, steps: number): () => Promise<unknown> {
  const agent = library.createAgent({
    model: scriptedMockModel(steps, { modelCalls: 0, toolCalls: 0 }),
    tools: { echo },
    budget: library.ExecutionBudget.unlimited(),
    ...(process.env.CALL_SETTINGS && {
      modelOptions: { callOptions: { temperature: 0, maxOutputTokens: 256 } },
    }),
  });
  return async () => {
    const state = await agent.execute(library.AgentState.empty().withUserMessage('go'), listener);
    if (state.status() !== 'completed' || state.stepCount() !== steps)
      throw new Error(`a ${steps}-step run ended ${state.status()} after ${state.stepCount()} steps`);
    return state;
  };
}

export default async function run(): Promise<void> {
  const baseDir = process.env.BASE;
  if (!baseDir) {
    console.log('skipped: set BASE=<dir of another checkout> to compare this one with it');
    return;
  }
  const base = (await import(pathToFileURL(resolve(baseDir, 'src/index.ts')).href)) as Library;
  const lengths = (process.env.STEPS ?? '1,5,20').split(',').map(Number);
  const rounds = Number(process.env.ROUNDS ?? 31);
  const table: Record<string, string | number>[] = [];
  for (const steps of lengths) {
    const ai = await aiSdkAdapter.setup(steps);
    const runs: Record<string, () => Promise<unknown>> = {
      base: runner(base, steps),
      this: runner(current, steps),
      'AI SDK': () => ai.run(),
    };
    const perRound = Math.max(2, Math.round(400 / steps));
    for (const fn of Object.values(runs)) for (let i = 0; i < perRound * 5; i++) await fn();
    const times: Record<string, number[]> = { base: [], this: [], 'AI SDK': [] };
    for (let round = 0; round < rounds; round++) {
      const order = Object.entries(runs);
      for (const [name, fn] of round % 2 ? order : order.reverse()) {
        const start = now();
        for (let i = 0; i < perRound; i++) await fn();
        times[name]?.push(((now() - start) * 1000) / perRound);
      }
    }
    const [b, t, a] = [times.base, times.this, times['AI SDK']] as number[][];
    table.push({
      steps,
      'base µs/run': median(b as number[]),
      'this µs/run': median(t as number[]),
      'this / base (per-round median)': median((t as number[]).map((x, i) => x / (b as number[])[i]!)),
      'AI SDK µs/run': median(a as number[]),
      'AI SDK / this': median(a as number[]) / median(t as number[]),
    });
  }
  printTable(`This checkout against ${baseDir} (model driver), ${rounds} interleaved rounds, medians`, table);
}
