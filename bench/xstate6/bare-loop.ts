/**
 * The bare loop, once per API: `idle` -> (go) -> inference -> tools -> decide -> inference ... ->
 * done, N steps; a promise actor invoked per step for the model call and one for the tool call; the
 * context updated from each answer (v5 `assign`, v6 a returned context patch). Both XState versions
 * are loaded in this one process (`xstate5` is the npm alias of xstate@5.33.3, `xstate` is
 * 6.0.0-alpha.52), samples interleaved. Also: an actor's creation + start + stop alone (the
 * same machine, resting in `idle`).
 *
 *   node --expose-gc --import tsx bare-loop.ts     (ROUNDS=, SAMPLE_MS=, STEPS=1,5,10 to change)
 */
import * as v6 from 'xstate';
import * as v5 from 'xstate5';
import { compare, opRow, printTable, type Variant, versionRow, warmUp } from './harness';

interface Ctx {
  readonly n: number;
  readonly limit: number;
  readonly answers: readonly unknown[];
}
const model = async (n: number) => ({ n, text: `answer ${n}` });
const tool = async (n: number) => n;

const loop5 = v5
  .setup({
    types: { context: {} as Ctx, input: {} as number, events: {} as { type: 'go' } },
    actors: {
      model: v5.fromPromise(({ input }: { input: number }) => model(input)),
      tool: v5.fromPromise(({ input }: { input: number }) => tool(input)),
    },
  })
  .createMachine({
    context: ({ input }) => ({ n: 0, limit: input, answers: [] }),
    initial: 'idle',
    states: {
      idle: { on: { go: 'inference' } },
      inference: {
        invoke: {
          src: 'model',
          input: ({ context }) => context.n,
          onDone: {
            target: 'tools',
            actions: v5.assign({ answers: ({ context, event }) => [...context.answers, event.output] }),
          },
        },
      },
      tools: {
        invoke: {
          src: 'tool',
          input: ({ context }) => context.n,
          onDone: { target: 'decide', actions: v5.assign({ n: ({ context }) => context.n + 1 }) },
        },
      },
      decide: {
        always: [
          { guard: ({ context }) => context.n >= context.limit, target: 'done' },
          { target: 'inference' },
        ],
      },
      done: { type: 'final' },
    },
  });

const loop6 = v6
  .setup({
    schemas: { context: v6.types<Ctx>(), input: v6.types<number>() },
    actors: {
      model: v6.createAsyncLogic({ run: ({ input }: { input: number }) => model(input) }),
      tool: v6.createAsyncLogic({ run: ({ input }: { input: number }) => tool(input) }),
    },
  })
  .createMachine({
    context: ({ input }) => ({ n: 0, limit: input, answers: [] }),
    initial: 'idle',
    states: {
      idle: { on: { go: { target: 'inference' } } },
      inference: {
        invoke: {
          src: 'model',
          input: ({ context }) => context.n,
          onDone: ({ context, event }) => ({
            target: 'tools',
            context: { answers: [...context.answers, event.output] },
          }),
        },
      },
      tools: {
        invoke: {
          src: 'tool',
          input: ({ context }) => context.n,
          onDone: ({ context }) => ({ target: 'decide', context: { n: context.n + 1 } }),
        },
      },
      decide: {
        always: ({ context }) => (context.n >= context.limit ? { target: 'done' } : { target: 'inference' }),
      },
      done: { type: 'final' },
    },
  });

/** Starts the actor, sends `go`, resolves with the final context once the actor is done. */
function runLoop(actor: {
  start(): unknown;
  send(event: { type: 'go' }): void;
  subscribe(observer: { complete(): void; error(e: unknown): void }): unknown;
  getSnapshot(): { context: Ctx; status: string };
}): Promise<Ctx> {
  return new Promise((resolve, reject) => {
    actor.subscribe({ complete: () => resolve(actor.getSnapshot().context), error: reject });
    actor.start();
    actor.send({ type: 'go' });
  });
}

function check(context: Ctx, steps: number): void {
  if (context.n !== steps || context.answers.length !== steps)
    throw new Error(`ran ${context.n} of ${steps}`);
}

const variants = (steps: number): Variant[] => [
  { name: 'v5', run: async () => check(await runLoop(v5.createActor(loop5, { input: steps })), steps) },
  { name: 'v6', run: async () => check(await runLoop(v6.createActor(loop6, { input: steps })), steps) },
];
const STEPS = (process.env.STEPS ?? '1,5,10,100,1000').split(',').map(Number);
const rows: Record<string, string | number>[] = [];
await warmUp(variants(10));
for (const steps of STEPS) {
  const [r5, r6] = await compare(variants(steps));
  rows.push(versionRow(steps, r5!, r6!));
}
printTable(
  'Bare loop (promise actor per step): CPU µs (process.cpuUsage), medians of interleaved samples',
  rows,
);

const lifecycle = await compare([
  { name: 'v5', run: () => v5.createActor(loop5, { input: 1 }).start().stop() },
  { name: 'v6', run: () => v6.createActor(loop6, { input: 1 }).start().stop() },
]);
const [l5, l6] = lifecycle;
printTable('Actor creation + start + stop alone (the loop machine, resting in idle): CPU µs', [
  opRow(l5!, l6!),
]);
