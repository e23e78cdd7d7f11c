export { type AgentEvent, agentLoop, type HookStage, type LoopEvent } from '../machines/agentLoop';
export type { Driver, DriverContext } from './drivers/driver';
export {
  allMessages,
  conversationWithCurrentToolTrace,
  type MessageCompiler,
} from './drivers/message-compiler';
export {
  type ModelDriverOptions,
  type ModelPrice,
  modelDriver,
  type PricingTable,
  toPrompt,
} from './drivers/model-driver';
export {
  SCRIPT_CURSOR_KEY,
  type ScriptEntry,
  type ScriptStep,
  scriptedDriver,
} from './drivers/scripted-driver';
export { BUDGET_GUARD, budgetGuard } from './hooks/budget-guards';
export { consecutiveErrorSteps, type ErrorPolicyOptions, errorPolicy } from './hooks/error-policy';
export { finishReasonGuard } from './hooks/finish-reason-guard';
export type {
  ErrorContext,
  Hook,
  HookResult,
  StageContext,
  StageName,
  ToolResultContext,
  ToolUseContext,
  ToolUseDecision,
} from './hooks/hook';
export { type ResponseSchema, structuredOutputGuard } from './hooks/structured-output-guard';
export type { SubagentDefinition } from './runtime/agent-definition';
export { type AgentDefinition, InvalidDefinitionError } from './runtime/agent-definition';
export {
  type Agent,
  type AgentActor,
  AgentRuntimeError,
  type CreateActorOptions,
  createAgent,
  type ExecuteOptions,
} from './runtime/create-agent';
export { AgentStopError } from './state/agent-stop-error';
export * from './state/index';
export type { AgentEventType, EventIds, ReportEvent } from './state/loop-events';
export {
  DEFAULT_MAX_DEPTH,
  SubagentDepthExceededError,
  SubagentFailedError,
  type SubagentsConfig,
} from './subagents/subagent-definition';
export {
  type SubagentRunner,
  subagentInputSchema,
  subagentResults,
  subagentTool,
} from './subagents/subagent-tool';
export {
  defineTool,
  type Tool,
  type ToolExecuteOptions,
  type ToolInputSchema,
  type ToolSet,
} from './tools/define-tool';
export { executeTools, ToolTimeoutError, toolResultMessage } from './tools/tool-executor';
export {
  AgentTestModelError,
  type AgentTestModelOptions,
  type AgentTestPath,
  type AgentTestStep,
  createAgentTestModel,
  type ModelEvent,
  PROBE_SUBAGENT,
  PROBE_TOOL,
} from './testing/agent-test-model';
export { type InvariantInput, invariantViolations } from './testing/invariants';
