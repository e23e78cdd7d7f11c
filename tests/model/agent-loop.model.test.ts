/**
 * Model-based tests of machines/agentLoop.ts: @xstate/graph enumerates the paths of the real
 * machine for several configurations (probe hooks at every stage or none, with a probe store or
 * none, from a state awaiting approval), and each path runs
 * against the real runtime with puppet model, tools and hooks. Invariants are checked at every
 * step; a final test fails if any state or transition of the chart was never taken.
 *
 * The fast tier (`npm test`) runs a covering sample of each configuration's paths (PATHS,
 * tests/support/test-tier.ts) and, for simple paths, a covering sample of the configuration's
 * transition paths (listing every simple path alone takes half a minute); the final coverage test
 * holds the sample to every state and transition. AM_TEST_TIER=all (`npm run test:all`, CI) runs every path.
 */
import { describe, expect, it } from 'vitest';
import type { Hook } from '../../src/hooks/hook';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { createAgentTestModel } from '../../src/testing/agent-test-model';
import { EVERY_PATH, PATHS } from '../support/test-tier';

const withHooks = createAgentTestModel({ probeHooks: true });
const withoutHooks = createAgentTestModel({ probeHooks: false });
const fromApproval = createAgentTestModel({
  probeHooks: false,
  probeStore: false,
  startAwaitingApproval: true,
  executions: 1,
});
// a crash between request and decision inside a subagent: the saved waiting tree runs again
const fromNestedApproval = createAgentTestModel({
  probeHooks: false,
  probeStore: false,
  startAwaitingApproval: 'inSubagent',
  executions: 1,
});
// a crash between recording the final answer and finalizing: the saved run only finishes
const afterFinalStep = createAgentTestModel({
  startAfterFinalStep: true,
  probeHooks: false,
  executions: 1,
  subagent: false,
  approvals: false,
});
// afterExecution hooks without onError hooks: a failing afterExecution hook's `error`, then the outcome
const afterExecutionOnly = createAgentTestModel({
  probeHooks: ['afterExecution'],
  probeStore: false,
  subagent: false,
  approvals: false,
  executions: 1,
});
// hooks at every stage but afterExecution: a run that ends goes around that stage
const withoutAfterExecutionHooks = createAgentTestModel({
  probeHooks: ['beforeExecution', 'beforeStep', 'afterStep', 'onError'],
  probeStore: false,
  subagent: false,
  approvals: false,
  executions: 1,
});
// a crash after the final step, resumed by an agent with afterExecution hooks: only they are left
const afterFinalStepWithHooks = createAgentTestModel({
  startAfterFinalStep: true,
  probeHooks: ['afterExecution'],
  probeStore: false,
  executions: 1,
  subagent: false,
  approvals: false,
});
const simple = createAgentTestModel({
  probeHooks: false,
  budget: new ExecutionBudget({ maxSteps: 2 }),
  executions: 1,
});
// without a store, a recorded step decides at once (no persist, no decide state)
const simpleWithoutStore = createAgentTestModel({
  probeHooks: false,
  probeStore: false,
  budget: new ExecutionBudget({ maxSteps: 2 }),
  executions: 1,
});

// run as execute() runs with no one listening: the outcome and the next step at once (#38)
const quietWithoutStore = createAgentTestModel({
  quiet: true,
  probeHooks: false,
  probeStore: false,
  subagent: false,
  approvals: false,
  budget: new ExecutionBudget({ maxSteps: 2 }),
});

describe('every transition, with hooks at every stage', () => {
  for (const path of withHooks.transitionPaths(PATHS)) it(path.description, () => path.run());
});

describe('every transition, without hooks', () => {
  for (const path of withoutHooks.transitionPaths(PATHS)) it(path.description, () => path.run());
});

describe('every transition, with hooks at every stage but afterExecution', () => {
  for (const path of withoutAfterExecutionHooks.transitionPaths(PATHS))
    it(path.description, () => path.run());
});

describe('every transition, resumed after the final step with afterExecution hooks', () => {
  for (const path of afterFinalStepWithHooks.transitionPaths(PATHS)) it(path.description, () => path.run());
});

describe('every transition, from a state saved while awaiting approval', () => {
  for (const path of fromApproval.transitionPaths(PATHS)) it(path.description, () => path.run());
});

describe('every transition, from a state saved while a subagent awaits approval', () => {
  for (const path of fromNestedApproval.transitionPaths(PATHS)) it(path.description, () => path.run());
});

describe('every transition, from a state saved after its final step', () => {
  for (const path of afterFinalStep.transitionPaths(PATHS)) it(path.description, () => path.run());
});

describe('every transition, with afterExecution hooks only', () => {
  for (const path of afterExecutionOnly.transitionPaths(PATHS)) it(path.description, () => path.run());
});

// An audit hook, as a user writes one: the steps its afterStep saw (by id), and runs with no step.
const audited = new Map<string, number>();
let auditedWithoutStep = 0;
const auditHook: Hook = {
  name: 'audit',
  afterStep: (state) => {
    const id = state.currentStep()?.id();
    if (id === undefined) auditedWithoutStep++;
    else audited.set(id, (audited.get(id) ?? 0) + 1);
  },
};
const withAudit = createAgentTestModel({ probeHooks: false, hooks: [auditHook], executions: 1 });

/** Every simple path (the full tier), or a covering sample of the transition paths (the fast tier). */
const simplePathsOf = (model: typeof simple) =>
  EVERY_PATH ? model.simplePaths() : model.transitionPaths(PATHS);

describe('afterStep and recorded steps are one to one (seed 003: every started step closes its cycle)', () => {
  for (const path of withAudit.transitionPaths(PATHS))
    it(path.description, async () => {
      audited.clear();
      auditedWithoutStep = 0;
      const final = await path.run();
      const recorded = final.steps().map((s) => s.id());
      expect(auditedWithoutStep).toBe(0);
      expect(recorded.map((id) => [id, audited.get(id)])).toEqual(recorded.map((id) => [id, 1]));
      // a step whose afterStep ran is recorded (or, on a path that ends mid-step, still in flight)
      const inFlight = final.currentStep()?.id();
      expect([...audited.keys()].filter((id) => !recorded.includes(id) && id !== inFlight)).toEqual([]);
    });
});

describe('every simple path of one execution, without hooks', () => {
  for (const path of simplePathsOf(simple)) it(path.description, () => path.run());
});

describe('every transition of a run no one listens to, without hooks or store', () => {
  for (const path of quietWithoutStore.transitionPaths(PATHS)) it(path.description, () => path.run());
});

describe('every simple path of one execution, without hooks or store', () => {
  for (const path of simplePathsOf(simpleWithoutStore)) it(path.description, () => path.run());
});

// One test per path: a path's time does not add up with the others' under one timeout.
describe('shortest paths reach every situation of the loop, and assertions of your own run at each step', () => {
  const paths = withHooks.shortestPaths(PATHS);
  const seen = new Set<string>();
  it('are many', () => expect(withHooks.shortestPaths().length).toBeGreaterThan(100));
  for (const path of paths) {
    it(path.description, () =>
      path.run(({ snapshot, state }) => {
        seen.add(JSON.stringify(snapshot.value));
        expect(state.agentId()).toBe('model');
      }),
    );
  }
  it('end completed, stopped and failed', () => {
    expect(seen).toContain('"completed"');
    expect(seen).toContain('"stopped"');
    expect(seen).toContain('"failed"');
  });
});

describe('coverage', () => {
  // In the fast tier, the claim that the covering sample still covers the chart.
  it(`takes every state and every transition of the chart (${EVERY_PATH ? 'every path' : 'the covering sample'})`, () => {
    const reports = [
      withHooks,
      withoutHooks,
      fromApproval,
      afterFinalStep,
      simpleWithoutStore,
      afterExecutionOnly,
      withoutAfterExecutionHooks,
      afterFinalStepWithHooks,
      quietWithoutStore,
    ].map((model) => model.coverage());
    const everywhere = (missing: (c: (typeof reports)[number]) => string[]) =>
      missing(reports[0]!).filter((x) => reports.every((c) => missing(c).includes(x)));
    const missingStates = everywhere((c) => c.missingStates);
    const missingTransitions = everywhere((c) => c.missingTransitions);
    const a = reports[0]!;
    expect(a.states.length).toBeGreaterThan(20);
    expect(a.transitions.length).toBeGreaterThan(40);
    expect(missingStates).toEqual([]);
    expect(missingTransitions).toEqual([]);
  });
});
