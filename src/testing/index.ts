/** `agent-machine/testing`: model-based tests of an agent over its real chart (`@xstate/graph`). */
export { createAgentTestModel } from './agent-test-model';
export { describeDivergence, expectReplay, ReplayAssertionError } from './expect-replay';
export { type GraphPath, TestingDependencyMissingError } from './graph';
export { type InvariantInput, invariantViolations } from './invariants';
export {
  AgentTestModelError,
  type AgentTestModelOptions,
  type AgentTestPath,
  type AgentTestStep,
  type ModelEvent,
  type PathChoice,
  PROBE_SUBAGENT,
  PROBE_TOOL,
} from './test-model-vocabulary';
