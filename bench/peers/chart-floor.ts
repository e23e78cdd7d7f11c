/**
 * What XState alone costs for this library's chart: the real `agentLoop` machine, its real workers
 * (`stepWorker`, answering on a promise turn as a model call does) and the real `IdleActors` (an actor
 * reused between runs, as `execute()` reuses it for a run no one listens to), but
 * every action that does the agent's work (AgentState updates, emitted events) a no-op and the state a
 * two-field stub. The guards that read the state are replaced to follow the same path as the
 * workload: N model calls, a tool call after each of the first N - 1, then the outcome. So a run
 * passes through the same states, microsteps and actors as `createAgent` makes, and the difference
 * to the other rows is the work this library and its peers do, not the statechart.
 */
import { assign, createActor } from 'xstate';
import { agentLoop } from '../../machines/agentLoop';
import { stateToRun } from '../../machines/loop-context';
import type { AgentState } from '../../src/index';
import { IdleActors } from '../../src/runtime/idle-actors';
import { stepWorker } from '../../src/runtime/step-worker';
import { type Adapter, type Counters, expectRun, FINAL_TEXT, versionOf } from './common';

const counters: Counters = { modelCalls: 0, toolCalls: 0 };

/** The stub state: model calls made, and whether the last one asked for a tool. */
interface Stub {
  readonly calls: number;
  readonly tools: boolean;
}
const stub = (state: unknown) => state as Stub;
const asState = (value: Stub) => value as unknown as AgentState;

/** Every action the chart names, as a no-op, but those that are XState's own mechanics. */
const mechanics = new Set([
  'requestInference',
  'requestTools',
  'requestHooks',
  'cancelHooks',
  'stopToolExecutor',
  'assignState',
  'assignStateForTools',
  'startToolExecutor',
  'releaseSubagent',
]);
const noOps = Object.fromEntries(
  Object.keys(agentLoop.implementations.actions)
    .filter((name) => !mechanics.has(name))
    .map((name) => [name, () => {}]),
);

export function chartFloor(steps: number) {
  return agentLoop.provide({
    // the state to run: an idle actor is sent it with `execute`, as the library's quiet runs are
    actions: {
      ...noOps,
      // as the real one, less the AgentState's own update: a reused actor's next execution spawns
      // its tool executor again
      startExecution: assign({
        state: ({ context, event }) => stateToRun(context, event),
        error: null,
        toolExecutorStarted: false,
      }),
    },
    guards: {
      hasToolCalls: ({ event }) => stub((event as { output: unknown }).output).tools,
      shouldStop: ({ context }) => stub(context.state).calls >= steps,
      stopSignalled: () => false,
      userStopped: () => false,
      steeredAfterAnswer: () => false,
      asksApproval: () => false,
      awaitsApproval: () => false,
      endedWhenSaved: () => false,
      isFailed: () => false,
      isStopped: () => false,
      // a run no one listens to (as the workload's): the outcome and the next step at once
      concludesAtOnce: ({ context }, params) =>
        params.status === 'completed' && stub(context.state).calls >= steps,
      startsStepAtOnce: () => true,
      startsRunAtOnce: () => true,
    },
    actors: {
      driver: stepWorker('driver', async ({ state }) => {
        counters.modelCalls++;
        const calls = stub(state).calls + 1;
        return asState({ calls, tools: calls < steps });
      }),
      toolExecutor: stepWorker('toolExecutor', async ({ state }) => {
        counters.toolCalls++;
        return asState({ calls: stub(state).calls, tools: false });
      }),
    },
  });
}

export const chartFloorAdapter: Adapter = {
  name: 'agentLoop chart alone (XState)',
  version: `machines/agentLoop.ts with stub work, ${versionOf('xstate')}`,
  counters,
  heap: false,
  setup(steps) {
    const machine = chartFloor(steps);
    const start: Stub = { calls: 0, tools: false };
    // actors reused between runs, as `execute()` reuses them for runs no one listens to
    const idle = new IdleActors(
      (state) => createActor(machine, { input: { state, reports: false } }),
      (state) => state,
    );
    return {
      async run() {
        const state = stub(await idle.run(asState(start), undefined));
        expectRun('agentLoop chart alone', steps, {
          modelCalls: state.calls,
          toolCalls: state.calls - 1,
          text: state.calls === steps ? FINAL_TEXT : null,
        });
        return state;
      },
    };
  },
};
