/**
 * What XState alone costs for this library's chart: the real `agentLoop` machine, its real workers
 * (`stepWorker`, answering on a promise turn as a model call does) and the real `runToOutcome`, but
 * every action that does the agent's work (AgentState updates, emitted events) a no-op and the state a
 * two-field stub. The guards that read the state are replaced to follow the same path as the
 * workload: N model calls, a tool call after each of the first N - 1, then the outcome. So a run
 * passes through the same states, microsteps and actors as `createAgent` makes, and the difference
 * to the other rows is the work this library and its peers do, not the statechart.
 */
import { createActor } from 'xstate';
import { agentLoop } from '../../machines/agentLoop';
import type { AgentState } from '../../src/index';
import { runToOutcome } from '../../src/runtime/run-to-outcome';
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
    actions: noOps,
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
    return {
      async run() {
        const actor = createActor(machine, { input: { state: asState(start), reports: false } });
        const state = stub(await runToOutcome(actor, undefined));
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
