/**
 * The peers bench's "agentLoop chart alone" row (bench/peers/chart-floor.ts) claims to pass through
 * the same states, microsteps and actors as a real run of the same workload: checked here, so that
 * a change of the chart cannot leave the floor measuring another path.
 */

import { describe, expect, it } from 'vitest';
import { createActor, type InspectionEvent } from 'xstate';
import { countingTool } from '../../bench/peers/agent-machine';
import { scriptedMockModel } from '../../bench/peers/ai-sdk';
import { chartFloor, chartFloorAdapter } from '../../bench/peers/chart-floor';
import { echo, question } from '../../bench/workload';
import { createAgent } from '../../src/runtime/create-agent';
import { type InternalActorOptions, runToOutcome } from '../../src/runtime/run-to-outcome';
import { ExecutionBudget } from '../../src/state/execution-budget';

/** The agent actor's microsteps (its state after each) and the actors made, in order. */
function recorder() {
  const path: string[] = [];
  const inspect = (event: InspectionEvent) => {
    const id = (event.actorRef as unknown as { id: string }).id;
    // the root actor's id is its session id (x:0, x:1, ...): named `root` here
    if (event.type === '@xstate.actor') path.push(`actor ${id.replace(/^x:\d+$/, 'root')}`);
    if (event.type !== '@xstate.microstep') return;
    // tool reports reach the agent only when someone listens (inspecting does): the bench's runs have none
    if (/^x:\d+$/.test(id) && !event.event.type.startsWith('tool.'))
      path.push(JSON.stringify((event.snapshot as { value?: unknown }).value));
  };
  return { path, inspect };
}

describe('the chart-alone bench row', () => {
  it.each([1, 3])('takes the path a real %i-step run takes', async (steps) => {
    const counters = { modelCalls: 0, toolCalls: 0 };
    const agent = createAgent({
      model: scriptedMockModel(steps, counters),
      tools: { echo: countingTool(echo, counters) },
      budget: ExecutionBudget.unlimited(),
    });
    // the bench's runs are quiet (no one listens): inspected here, on the chart quiet runs take
    const real = recorder();
    const quiet: InternalActorOptions = { inspect: real.inspect, reports: false };
    const state = await runToOutcome(agent.createActor(question(), quiet), undefined);
    expect(state.stepCount()).toBe(steps);

    const floor = recorder();
    const actor = createActor(chartFloor(steps), {
      input: { state: { calls: 0, tools: false } as never, reports: false },
      inspect: floor.inspect,
    });
    const end = (await runToOutcome(actor, undefined)) as unknown as { calls: number };
    expect(end.calls).toBe(steps);

    expect(floor.path).toEqual(real.path);
    expect(real.path.filter((p) => p.startsWith('actor'))).toEqual(
      steps > 1 ? ['actor root', 'actor driver', 'actor toolExecutor'] : ['actor root', 'actor driver'],
    );
  });

  it('runs again and again on its reused actor, as the bench times it', async () => {
    const bench = await chartFloorAdapter.setup(3);
    for (let run = 0; run < 3; run++) expect(await bench.run()).toEqual({ calls: 3, tools: false });
  });
});
