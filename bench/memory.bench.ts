/**
 * Memory at scale (issue 38), heap measured with GC settled before and after (needs --expose-gc,
 * as `npm run bench` runs it):
 * - an idle live agent actor: `agent.createActor(state).start()` resting in `pending`, N of them;
 * - a session waiting for approval, loaded and held (what a worker or a chat server keeps while a
 *   person decides), N of them;
 * - a 5-step run in flight, held mid-run: each run's third tool call waits on a gate, so N runs are
 *   alive at once with two steps done; beside it the AI SDK's `generateText` with the same model
 *   script and a tool waiting the same way. From the heap per run: how many such runs fit in 1 GB.
 * MEMORY_N sets N (default 2,000).
 */
import { generateText, isStepCount, tool } from 'ai';
import { z } from 'zod';
import {
  AgentState,
  createAgent,
  defineTool,
  ExecutionBudget,
  InMemorySessionStore,
  scriptedDriver,
} from '../src/index';
import { heapGrowth, printTable } from './harness';
import { scriptedMockModel } from './peers/ai-sdk';
import { callId } from './peers/common';

const N = Number(process.env.MEMORY_N ?? 2_000);
const GIB = 1024;

function gate() {
  let open = () => {};
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { opened, open };
}

/** Resolves after `count` calls of `arrived`. */
function arrivals(count: number) {
  let left = count;
  let done = () => {};
  const all = new Promise<void>((resolve) => {
    done = resolve;
  });
  return {
    all,
    arrived: () => {
      left--;
      if (left === 0) done();
    },
  };
}

async function idleActors(): Promise<number> {
  const agent = createAgent({ driver: scriptedDriver([{ text: 'hi' }]) });
  const { result, mib } = await heapGrowth(() =>
    Array.from({ length: N }, () => agent.createActor(AgentState.empty().withUserMessage('hi')).start()),
  );
  for (const actor of result) actor.stop();
  return (mib * 1024) / N;
}

async function waitingSessions(): Promise<number> {
  const pay = defineTool({
    description: 'Pay',
    inputSchema: z.object({ amount: z.number() }),
    needsApproval: true,
    execute: async ({ amount }) => amount,
  });
  const store = new InMemorySessionStore();
  const agent = createAgent({
    driver: scriptedDriver([{ text: 'paying', toolCalls: [{ name: 'pay', args: { amount: 5 } }] }]),
    tools: { pay },
    store,
  });
  await agent.execute(AgentState.empty().withUserMessage('pay'), { sessionId: 'wait' });
  const { mib } = await heapGrowth(async () => {
    const held = [];
    for (let i = 0; i < N; i++) held.push((await store.load('wait'))?.state);
    if (held.some((state) => state?.pendingApprovals().length !== 1)) throw new Error('not waiting');
    return held;
  });
  return (mib * 1024) / N;
}

/** Runs of 5 steps held at their third tool call; resolves with KiB per run. */
async function runsInFlight(library: 'agent-machine' | 'ai-sdk'): Promise<number> {
  const held = gate();
  const here = arrivals(N);
  const waitAtThird = async (n: number) => {
    if (n === 2) {
      here.arrived();
      await held.opened;
    }
    return n;
  };
  let runs: Promise<unknown>[] = [];
  if (library === 'agent-machine') {
    const echo = defineTool({
      description: 'Echo a number',
      inputSchema: z.object({ n: z.number() }),
      execute: ({ n }) => waitAtThird(n),
    });
    const agent = createAgent({
      driver: scriptedDriver([
        (state) =>
          state.stepCount() < 4
            ? { toolCalls: [{ name: 'echo', args: { n: state.stepCount() }, id: callId(state.stepCount()) }] }
            : { text: 'done' },
      ]),
      tools: { echo },
      budget: ExecutionBudget.unlimited(),
    });
    const { mib } = await heapGrowth(async () => {
      runs = Array.from({ length: N }, () => agent.execute(AgentState.empty().withUserMessage('go')));
      await here.all;
      return runs;
    });
    held.open();
    await Promise.all(runs);
    return (mib * 1024) / N;
  }
  const echo = tool({
    description: 'Echo a number',
    inputSchema: z.object({ n: z.number() }),
    execute: ({ n }) => waitAtThird(n),
  });
  const model = scriptedMockModel(5, { modelCalls: 0, toolCalls: 0 });
  const stopWhen = isStepCount(5);
  const { mib } = await heapGrowth(async () => {
    runs = Array.from({ length: N }, () => generateText({ model, tools: { echo }, prompt: 'go', stopWhen }));
    await here.all;
    return runs;
  });
  held.open();
  await Promise.all(runs);
  return (mib * 1024) / N;
}

export default async function memory(): Promise<void> {
  const idle = await idleActors();
  const waiting = await waitingSessions();
  const ours = await runsInFlight('agent-machine');
  const theirs = await runsInFlight('ai-sdk');
  printTable(`Memory at scale (KiB of heap each, ${N} held at once, GC settled)`, [
    {
      what: 'idle live agent actor (pending)',
      'KiB each': idle,
      'per 1 GB': Math.floor((GIB * 1024) / idle),
    },
    {
      what: 'session waiting for approval, loaded and held',
      'KiB each': waiting,
      'per 1 GB': Math.floor((GIB * 1024) / waiting),
    },
    {
      what: 'agent-machine 5-step run, held at its 3rd tool call',
      'KiB each': ours,
      'per 1 GB': Math.floor((GIB * 1024) / ours),
    },
    {
      what: 'AI SDK generateText 5-step run, held the same way',
      'KiB each': theirs,
      'per 1 GB': Math.floor((GIB * 1024) / theirs),
    },
  ]);
}
