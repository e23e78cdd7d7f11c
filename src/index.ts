export {
  type AgentEvent,
  agentLoop,
  type HookStage,
  type LoopEvent,
  type LoopInput,
  LoopTag,
  StateId,
  type StepCheck,
  statePath,
  type WorkerAnswer,
  type WorkerInput,
  type WorkRequest,
} from '../machines/agentLoop';
export { type ContextOverflow, contextOverflowOf } from './context/context-overflow';
export { SUMMARY_SECTION } from './context/context-summary';
export {
  type ContextCompaction,
  type ContextOptions,
  InvalidContextOptionsError,
} from './context/context-window';
export { estimateMessageTokens, estimateTextTokens } from './context/token-estimate';
export * from './distributed/index';
export type { Driver, DriverContext } from './drivers/driver';
export {
  type FileData,
  type JSONValue,
  type LanguageModel,
  type ModelCallSettings,
  type PromptMessage,
  type ProviderTool,
  type ToolChoice,
  UnsupportedModelError,
} from './drivers/language-model';
export {
  allMessages,
  conversationWithCurrentToolTrace,
  type MessageCompiler,
} from './drivers/message-compiler';
export type { ModelCallOptions } from './drivers/model-call';
export {
  type ModelDriverOptions,
  type ModelPrice,
  modelDriver,
  type PricingTable,
  parseArgs,
  toPrompt,
} from './drivers/model-driver';
export { AllModelsFailedError, type AnsweredCall, callModels } from './drivers/model-fallback';
export { ModelRetriesExhaustedError, type RetryOptions } from './drivers/model-retries';
export { ModelStreamError } from './drivers/model-stream';
export { REACT_TEXT_KEY, type ReActDriverOptions, reactDriver, toReActPrompt } from './drivers/react-driver';
export {
  OBSERVATION_STOP,
  parseReActReply,
  type ReActReply,
  type ReActToolDescription,
  reactCorrection,
  reactInstructions,
} from './drivers/react-protocol';
export {
  type Recording,
  type ReplayDivergence,
  ReplayDivergenceError,
  type ReplayDriverOptions,
  replayDriver,
} from './drivers/replay-driver';
export { digestOf, stepRequest } from './drivers/request-digest';
export {
  SCRIPT_CURSOR_KEY,
  type ScriptEntry,
  type ScriptStep,
  scriptedDriver,
} from './drivers/scripted-driver';
export type { PrepareStep, StepSettings } from './drivers/step-settings';
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
export {
  type AttachableActor,
  buildRunView,
  combineInspectors,
  type DivergenceView,
  decodeTracedState,
  InvalidTraceError,
  NotARecordingError,
  NotARunError,
  parseRun,
  type ReplaySummary,
  type RunInput,
  type RunView,
  type RunViewerOptions,
  readTrace,
  recordTrace,
  renderRunView,
  renderRunViewer,
  replaySessions,
  sanitizeAgentContext,
  sanitizeAgentEvent,
  summarizeAgentState,
  TRACE_FORMAT,
  TRACE_VERSION,
  type Trace,
  type TraceActor,
  type TraceAgent,
  type TracedAgent,
  type TraceEntry,
  type TraceEntryKind,
  type TraceEntryOf,
  type TraceRecorder,
  type TraceRecorderOptions,
  traceSchema,
  traceStates,
  unpackState,
} from './inspect/index';
export type { McpCallResult, McpConnection, McpToolAnnotations, McpToolInfo } from './mcp/mcp-connection';
export {
  McpDependencyMissingError,
  McpResultInvalidError,
  McpServerError,
  McpToolError,
  McpToolNameConflictError,
} from './mcp/mcp-errors';
export type {
  McpHttpServerConfig,
  McpServerConfig,
  McpServersConfig,
  McpStdioServerConfig,
  McpSupervision,
  McpToolChoice,
  McpToolSetting,
} from './mcp/mcp-server-config';
export { mcpServerMachine } from './mcp/mcp-server-machine';
export { McpServers } from './mcp/mcp-servers';
export { SupervisedMcpServer } from './mcp/supervised-mcp-server';
export * from './persistence/index';
export type { SubagentDefinition } from './runtime/agent-definition';
export { type AgentDefinition, InvalidDefinitionError } from './runtime/agent-definition';
export { ChatTurnConflictError } from './runtime/chat-turn-conflict-error';
export {
  type Agent,
  type AgentActor,
  AgentRuntimeError,
  type ApprovalInput,
  type CreateActorOptions,
  createAgent,
  type ExecuteOptions,
  MissingRecordedResultError,
  type ReplayOptions,
  type ReplayResult,
} from './runtime/create-agent';
export { AgentStopError } from './state/agent-stop-error';
export { BUDGET_GUARD, budgetSignal } from './state/budget-signal';
export * from './state/index';
export {
  type AgentEventType,
  type ContextCompactedEvent,
  type EventIds,
  eventIds,
  type ReportEvent,
  stepEventIds,
} from './state/loop-events';
export { SubagentBudgetExhaustedError } from './subagents/sibling-share';
export {
  DEFAULT_MAX_DEPTH,
  SubagentDepthExceededError,
  SubagentFailedError,
  type SubagentsConfig,
} from './subagents/subagent-definition';
export {
  type SubagentRunner,
  subagentInputSchema,
  subagentTool,
} from './subagents/subagent-tool';
export { AgentTracing, type FollowedRun } from './telemetry/agent-tracing';
export { genAiMessages } from './telemetry/gen-ai-messages';
export { type OpenTelemetryApi, TelemetryDependencyMissingError } from './telemetry/open-telemetry-api';
export type {
  TelemetryAttributes,
  TelemetryAttributeValue,
  TelemetryOptions,
  TelemetrySpan,
  TelemetryTracer,
} from './telemetry/telemetry-options';
export { createAgentTestModel } from './testing/agent-test-model';
export { describeDivergence, expectReplay, ReplayAssertionError } from './testing/expect-replay';
export { type InvariantInput, invariantViolations } from './testing/invariants';
export {
  AgentTestModelError,
  type AgentTestModelOptions,
  type AgentTestPath,
  type AgentTestStep,
  type ModelEvent,
  PROBE_SUBAGENT,
  PROBE_TOOL,
} from './testing/test-model-vocabulary';
export {
  type ApprovalCheckOptions,
  defineTool,
  type Tool,
  type ToolEffect,
  type ToolExecuteOptions,
  type ToolInputSchema,
  type ToolSet,
  toolDescription,
  toolEffect,
} from './tools/define-tool';
export { executeTools, ToolTimeoutError, toolResultMessage } from './tools/tool-executor';
export * from './ui/index';
