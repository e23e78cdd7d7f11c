/**
 * Why the step's workers are long-lived: a bare XState v5 loop of 10 steps (a model call, then a
 * tool call, then an eventless decision) with its two async jobs run (a) as a promise actor
 * invoked per step, as `invoke` on the state, and (b) as two callback actors invoked once and sent
 * a request per step, as machines/agentLoop.ts does. Interleaved samples, medians.
 */
import { type AnyStateMachine, assign, createActor, fromCallback, fromPromise, sendTo, setup } from 'xstate';
import { median, now, printTable } from './harness';

const STEPS = 10;
const model = async (n: number) => ({ n, text: `answer ${n}` });
const tool = async (n: number) => n;
const decide = [
  { guard: ({ context }: { context: { n: number } }) => context.n >= STEPS, target: 'done' },
  { target: 'inference' },
] as const;

const perStep = setup({
  types: { context: {} as { n: number; answers: unknown[] } },
  actors: {
    model: fromPromise(({ input }: { input: number }) => model(input)),
    tool: fromPromise(({ input }: { input: number }) => tool(input)),
  },
}).createMachine({
  context: { n: 0, answers: [] },
  initial: 'inference',
  states: {
    inference: {
      invoke: {
        src: 'model',
        input: ({ context }) => context.n,
        onDone: {
          target: 'tools',
          actions: assign({ answers: ({ context, event }) => [...context.answers, event.output] }),
        },
      },
    },
    tools: {
      invoke: {
        src: 'tool',
        input: ({ context }) => context.n,
        onDone: { target: 'decide', actions: assign({ n: ({ context }) => context.n + 1 }) },
      },
    },
    decide: { always: decide },
    done: { type: 'final' },
  },
});

/** A worker: answers each `{ n }` request with `<answer>` carrying the job's output. */
const worker = (job: (n: number) => Promise<unknown>, answer: string) =>
  fromCallback<{ type: 'work'; n: number }>(({ receive, sendBack }) => {
    receive(({ n }) => void job(n).then((output) => sendBack({ type: answer, output })));
  });

const longLived = setup({
  types: {
    context: {} as { n: number; answers: unknown[] },
    events: {} as { type: 'model.done'; output: unknown } | { type: 'tool.done'; output: unknown },
  },
  actors: { model: worker(model, 'model.done'), tool: worker(tool, 'tool.done') },
}).createMachine({
  context: { n: 0, answers: [] },
  invoke: [
    { id: 'model', src: 'model' },
    { id: 'tool', src: 'tool' },
  ],
  initial: 'inference',
  states: {
    inference: {
      entry: sendTo('model', ({ context }) => ({ type: 'work' as const, n: context.n })),
      on: {
        'model.done': {
          target: 'tools',
          actions: assign({ answers: ({ context, event }) => [...context.answers, event.output] }),
        },
      },
    },
    tools: {
      entry: sendTo('tool', ({ context }) => ({ type: 'work' as const, n: context.n })),
      on: { 'tool.done': { target: 'decide', actions: assign({ n: ({ context }) => context.n + 1 }) } },
    },
    decide: { always: decide },
    done: { type: 'final' },
  },
});

function run(machine: AnyStateMachine): Promise<void> {
  return new Promise((resolve, reject) => {
    const actor = createActor(machine);
    actor.subscribe({ complete: () => resolve(), error: reject });
    actor.start();
  });
}

export default async function bench(): Promise<void> {
  const machines = {
    'an actor per step (invoke on the state)': perStep,
    'two long-lived workers': longLived,
  };
  const runs = 200;
  const times = new Map<string, number[]>(Object.keys(machines).map((k) => [k, []]));
  for (let i = 0; i < 300; i++) for (const m of Object.values(machines)) await run(m);
  for (let round = 0; round < 25; round++) {
    for (const [name, machine] of Object.entries(machines)) {
      const start = now();
      for (let i = 0; i < runs; i++) await run(machine);
      times.get(name)?.push(((now() - start) * 1000) / (runs * STEPS));
    }
  }
  const base = median(times.get('two long-lived workers') ?? []);
  printTable(
    `A bare XState loop of ${STEPS} steps (a model job and a tool job per step): µs per step, median of 25 samples`,
    [...times].map(([jobs, t]) => ({ 'async jobs as': jobs, 'µs/step': median(t), ratio: median(t) / base })),
  );
}
