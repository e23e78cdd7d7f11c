/**
 * The XState 6 twin of bench/peers/chart-floor.ts: the port (chart6/) with the same stubs: XState's
 * own mechanics kept, every other action a no-op, the state a two-field stub, the guards that read
 * the state replaced to follow the workload's path, the real workers (`stepWorker`, v6 port).
 */

import { agentLoop as agentLoop6 } from './chart6/agentLoop';
import { loopActions } from './chart6/loop-actions';
import { loopEmits } from './chart6/loop-emits';
import { stepWorker as stepWorker6 } from './chart6/step-worker';
import type { AgentState } from './repo/src/state/agent-state';

export interface Stub {
  readonly calls: number;
  readonly tools: boolean;
}
export const stub = (state: unknown) => state as Stub;
export const asState = (value: Stub) => value as unknown as AgentState;
export const counters = { modelCalls: 0, toolCalls: 0 };

/** As in bench/peers/chart-floor.ts: XState's own mechanics stay, the agent's work is a no-op. */
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
const noOps6 = Object.fromEntries(
  Object.keys({ ...loopActions, ...loopEmits })
    .filter((name) => !mechanics.has(name))
    .map((name) => [name, () => undefined]),
);

export function chartFloor6(steps: number) {
  return agentLoop6.provide({
    actions: noOps6,
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
      driver: stepWorker6('driver', async ({ state }) => {
        counters.modelCalls++;
        const calls = stub(state).calls + 1;
        return asState({ calls, tools: calls < steps });
      }),
      toolExecutor: stepWorker6('toolExecutor', async ({ state }) => {
        counters.toolCalls++;
        return asState({ calls: stub(state).calls, tools: false });
      }),
    },
  });
}
