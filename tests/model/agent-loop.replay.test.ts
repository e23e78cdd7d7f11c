/**
 * Every recorded run is a regression test: each path the model-based suite generates (the same
 * configurations as agent-loop.model.test.ts) is run, and its final state replayed through the
 * same definition with the model and tools answering from the recording: no divergence.
 *
 * The probe hooks answer as the path made them answer (`path.replay`). Left out: paths with an
 * input from outside the agent during the replayed execution (a `stop`, an approval decision or
 * its timeout, a message sent while waiting or steered into the run, a late answer), which a replay of the state alone
 * cannot deliver again, and paths that end while hooks wait for the puppet (the replay's hooks
 * would wait for an answer that never comes). The configurations have no probe store (a replay
 * saves nothing).
 */
import { describe, expect, it } from 'vitest';
import { type AgentTestPath, createAgentTestModel, ExecutionBudget } from '../../src/index';

const external = new Set(['stop', 'approve', 'reject', 'edit', 'user.message', 'steer']);
/**
 * A path that leaves its agent waiting on its hooks ends a recording the replay cannot end at
 * (the hooks would have to wait for an answer that never comes); waiting on its model or tools,
 * the replay ends where the recording does (the step in flight is not saved).
 */
const restsWhereAReplayEnds = (path: AgentTestPath) => {
  const end = path.description.slice(0, path.description.indexOf(' via '));
  const last = path.events.at(-1)?.type;
  // a message sent while a call waits for a person starts no execution: an input from outside
  const sentWhileWaiting =
    end.includes('awaitingApproval') && (last === 'execute' || last === 'user.message');
  return !end.includes('runHooks') && !sentWhileWaiting;
};
const replayable = (path: AgentTestPath) => {
  if (!restsWhereAReplayEnds(path)) return false;
  // only the last execution is kept in the final state: the events after its start count
  const start = path.events.findLastIndex((e) => e.type === 'execute' || e.type === 'user.message');
  return path.events
    .slice(start + 1)
    .every(
      (e) =>
        !external.has(e.type) &&
        !String(e.type).startsWith('xstate.after') &&
        e.behaviour !== 'stale' &&
        e.behaviour !== 'staleError',
    );
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
    const all = model[paths]();
    const kept = all.filter(replayable);
    it(`replays ${kept.length} of its ${all.length} paths (the others take an input from outside or end inside hooks)`, () =>
      expect(kept.length).toBeGreaterThan(20));
    for (const path of kept)
      it(path.description, async () => {
        const recorded = await path.run();
        if (!recorded.execution()) return;
        const { divergence } = await path.replay(recorded);
        expect(divergence).toBeNull();
      });
  });
}
