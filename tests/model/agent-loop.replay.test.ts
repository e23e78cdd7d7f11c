/**
 * Every recorded run is a regression test: each path the model-based suite generates (the same
 * configurations as agent-loop.model.test.ts) is run, and its final state replayed through the
 * same definition with the model and tools answering from the recording. Every path replays with
 * no divergence, or is refused up front (UnreplayableRunError) for a documented reason; a path
 * whose execution ended replays JSON-equal to its recording, ids and timestamps included.
 *
 * The probe hooks answer as the path made them answer (`path.replay`); a hook the path left
 * waiting is where the recording ends (the replay ends there too). The inputs from outside the
 * agent are sent again where the recording shows them: a person's stop (wherever it came), the
 * decisions on calls waiting for approval (inside a subagent too), the approval timeout, steered
 * messages; a message or `execute` sent while a call waits, and a late answer to an earlier
 * request, change nothing and need no sending. The configurations have no probe store (a replay
 * saves nothing).
 *
 * The fast tier (`npm test`) replays a covering sample of each configuration's paths (PATHS,
 * tests/support/test-tier.ts; a sample of the transition paths for simple paths), chosen as
 * agent-loop.model.test.ts chooses the sample whose coverage of the chart it checks.
 * AM_TEST_TIER=all replays every path.
 */
import { describe, expect, it } from 'vitest';
import { type UnreplayableReason, UnreplayableRunError } from '../../src/replay/unreplayable-run';
import type { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { createAgentTestModel } from '../../src/testing/agent-test-model';
import { EVERY_PATH, PATHS } from '../support/test-tier';

/**
 * The reason a recorded run must be refused, read from the recording: a message steered in after a
 * final answer had ended the run. (A person's stop or the approval timeout that ended the
 * `approver` subagent's call while the call inside it waited keeps the subagent's run on the ended
 * call: those paths replay.)
 */
const refusedBecause = (recorded: AgentState): UnreplayableReason | null => {
  if (recorded.steeredMessages().length > 0 && recorded.status() === 'completed' && !recorded.stopSignal())
    return 'steered-after-last-step';
  return null;
};

const configurations = {
  'with hooks at every stage, every transition': {
    model: createAgentTestModel({ probeHooks: true, probeStore: false }),
    paths: 'transitionPaths',
  },
  'without hooks, every transition': {
    model: createAgentTestModel({ probeHooks: false, probeStore: false }),
    paths: 'transitionPaths',
  },
  'one execution, every simple path': {
    model: createAgentTestModel({
      probeHooks: false,
      probeStore: false,
      budget: new ExecutionBudget({ maxSteps: 2 }),
      executions: 1,
    }),
    paths: 'simplePaths',
  },
} as const;

for (const [name, { model, paths }] of Object.entries(configurations)) {
  describe(`replaying every path (${name})`, () => {
    const all = EVERY_PATH ? model[paths]() : model.transitionPaths(PATHS);
    it(`has ${all.length} paths`, () => expect(all.length).toBeGreaterThan(EVERY_PATH ? 20 : 10));
    for (const path of all)
      it(path.description, async () => {
        const recorded = await path.run();
        if (!recorded.execution()) return;
        const reason = refusedBecause(recorded);
        if (reason === null) {
          const { divergence, state } = await path.replay(recorded);
          expect(divergence).toBeNull();
          // an ended run replays bit-exact, ids and timestamps included (one saved in progress is
          // replayed up to where its recording ends, and stopped there)
          if (recorded.execution()?.completedAt())
            expect(JSON.stringify(state)).toBe(JSON.stringify(recorded));
        } else {
          const refusal = await path.replay(recorded).catch((error: unknown) => error);
          expect(refusal).toBeInstanceOf(UnreplayableRunError);
          expect(refusal).toMatchObject({ code: 'REPLAY_UNREPLAYABLE', reason });
        }
      });
  });
}
