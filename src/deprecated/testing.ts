/**
 * Names the main entry exported before they moved to `agent-machine/testing`
 * (model-based tests): deprecated there for one release, each its new home's own value.
 */
import * as testing from '../testing/index';

/** @deprecated Import from `agent-machine/testing`. */
export const AgentTestModelError = testing.AgentTestModelError;
/** @deprecated Import from `agent-machine/testing`. */
export type AgentTestModelError = testing.AgentTestModelError;
/** @deprecated Import from `agent-machine/testing`. */
export type AgentTestModelOptions = testing.AgentTestModelOptions;
/** @deprecated Import from `agent-machine/testing`. */
export type AgentTestPath = testing.AgentTestPath;
/** @deprecated Import from `agent-machine/testing`. */
export type AgentTestStep = testing.AgentTestStep;
/** @deprecated Import from `agent-machine/testing`. */
export const createAgentTestModel = testing.createAgentTestModel;
/** @deprecated Import from `agent-machine/testing`. */
export const describeDivergence = testing.describeDivergence;
/** @deprecated Import from `agent-machine/testing`. */
export const expectReplay = testing.expectReplay;
/** @deprecated Import from `agent-machine/testing`. */
export type GraphPath<TSnapshot, TEvent> = testing.GraphPath<TSnapshot, TEvent>;
/** @deprecated Import from `agent-machine/testing`. */
export type InvariantInput = testing.InvariantInput;
/** @deprecated Import from `agent-machine/testing`. */
export const invariantViolations = testing.invariantViolations;
/** @deprecated Import from `agent-machine/testing`. */
export type ModelEvent = testing.ModelEvent;
/** @deprecated Import from `agent-machine/testing`. */
export type PathChoice = testing.PathChoice;
/** @deprecated Import from `agent-machine/testing`. */
export const PROBE_SUBAGENT = testing.PROBE_SUBAGENT;
/** @deprecated Import from `agent-machine/testing`. */
export const PROBE_TOOL = testing.PROBE_TOOL;
/** @deprecated Import from `agent-machine/testing`. */
export const ReplayAssertionError = testing.ReplayAssertionError;
/** @deprecated Import from `agent-machine/testing`. */
export type ReplayAssertionError = testing.ReplayAssertionError;
/** @deprecated Import from `agent-machine/testing`. */
export const TestingDependencyMissingError = testing.TestingDependencyMissingError;
/** @deprecated Import from `agent-machine/testing`. */
export type TestingDependencyMissingError = testing.TestingDependencyMissingError;
