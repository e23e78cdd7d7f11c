/**
 * Every recorded run is a regression test: each path the model-based suite generates (the same
 * configurations as agent-loop.model.test.ts) is run, and its final state replayed through the
 * same definition with the model and tools answering from the recording: no divergence.
 *
 * The probe hooks answer as the path made them answer (`path.replay`); a `stop` that came while the
 * model or a tool ran is sent again there by the replay, and the decisions on the agent's own calls
 * are taken again. Left out: paths with another input from outside the agent during the replayed
 * execution (a stop while hooks or a person waited, a decision inside a subagent, an approval
 * timeout, a message sent while waiting or steered into the run, a late answer), which a replay
 * of the state alone cannot deliver again, and paths that end while hooks wait for the puppet (the replay's hooks
 * would wait for an answer that never comes). The configurations have no probe store (a replay
 * saves nothing).
 */
import { describe, expect, it } from 'vitest';
import { type AgentTestPath, createAgentTestModel, ExecutionBudget } from '../../src/index';

const external = new Set(['stop', 'user.message', 'steer']);
const decision = new Set(['approve', 'reject', 'edit']);
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
/**
 * A `stop` is replayed where the recording shows it came: while the model call or a tool call was in
 * flight (the replay sends it there). Not while hooks waited (the replay's hooks answer at once) or
 * while a call waited for a person (the replayed run returns waiting).
 */
const stopReplayable = (events: readonly AgentTestPath['events'][number][], withHooks: boolean) =>
  !withHooks && events.every((e) => e.behaviour !== 'approvalCall' && e.behaviour !== 'nestedApproval');
const replayable = (withHooks: boolean) => (path: AgentTestPath) => {
  if (!restsWhereAReplayEnds(path)) return false;
  // only the last execution is kept in the final state: the events after its start count
  const start = path.events.findLastIndex((e) => e.type === 'execute' || e.type === 'user.message');
  const last = path.events.slice(start + 1);
  const stopOk = stopReplayable(last, withHooks);
  // decisions are taken again on the agent's own calls, not inside a waiting subagent
  if (last.some((e) => e.behaviour === 'nestedApproval') && last.some((e) => decision.has(e.type)))
    return false;
  return last.every(
    (e) =>
      (!external.has(e.type) || (e.type === 'stop' && stopOk)) &&
      !String(e.type).startsWith('xstate.after') &&
      e.behaviour !== 'stale' &&
      e.behaviour !== 'staleError',
  );
};

const configurations = {
  'with hooks at every stage, every transition': {
    model: createAgentTestModel({ probeHooks: true, probeStore: false }),
    paths: 'transitionPaths',
    withHooks: true,
  },
  'without hooks, every transition': {
    model: createAgentTestModel({ probeHooks: false, probeStore: false }),
    paths: 'transitionPaths',
    withHooks: false,
  },
  'one execution, every simple path': {
    model: createAgentTestModel({
      probeHooks: false,
      probeStore: false,
      budget: new ExecutionBudget({ maxSteps: 2 }),
      executions: 1,
    }),
    paths: 'simplePaths',
    withHooks: false,
  },
} as const;

for (const [name, { model, paths, withHooks }] of Object.entries(configurations)) {
  describe(`replaying every path (${name})`, () => {
    const all = model[paths]();
    const kept = all.filter(replayable(withHooks));
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
