/**
 * The main entry: what an app uses (createAgent, defineTool, the drivers, the stores an app picks,
 * the state and its readers, the errors an app catches). The other names are grouped by audience in
 * subpath entries: `agent-machine/stores`, `/distributed`, `/inspect`, `/ui`, `/mcp`, `/telemetry`,
 * `/testing`; the chart's protocol and plumbing for custom runtimes in `/internal`. The names this
 * entry exported before they moved are re-exported, deprecated, until the next release
 * (src/deprecated/). tests/architecture/main-entry.test.ts holds it to 120 values.
 */

export { type AgentEvent, type HookStage, LoopTag, StateId, statePath } from '../machines/agentLoop';
export { type ContextOverflow, contextOverflowOf } from './context/context-overflow';
export { SUMMARY_SECTION } from './context/context-summary';
export {
  type ContextCompaction,
  type ContextOptions,
  InvalidContextOptionsError,
} from './context/context-window';
export { estimateMessageTokens, estimateTextTokens } from './context/token-estimate';
// Names this entry exported before they moved to a subpath entry: deprecated, removed in the next release.
export * from './deprecated/index';
export type { Driver, DriverContext } from './drivers/driver';
export {
  type LanguageModel,
  type ModelCallSettings,
  type ProviderTool,
  type ToolChoice,
  UnsupportedModelError,
} from './drivers/language-model';
export type { ModelCallOptions } from './drivers/model-call';
export {
  type ModelDriverOptions,
  type ModelPrice,
  modelDriver,
  type PricingTable,
} from './drivers/model-driver';
export { AllModelsFailedError } from './drivers/model-fallback';
export { ModelRetriesExhaustedError, type RetryOptions } from './drivers/model-retries';
export { ModelStreamError } from './drivers/model-stream';
export { type ReActDriverOptions, reactDriver } from './drivers/react-driver';
export { type ScriptEntry, type ScriptStep, scriptedDriver } from './drivers/scripted-driver';
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
export * from './ledger/index';
export * from './messages/index';
export type { Durability } from './persistence/durability';
export {
  CheckpointNotFoundError,
  InvalidSessionIdError,
  NoSessionStoreError,
  SessionConflictError,
  SessionNotFoundError,
} from './persistence/errors';
export type { ExecutionStore } from './persistence/execution-store';
export { FileSessionStore } from './persistence/file-session-store';
export { InMemoryExecutionStore } from './persistence/in-memory-execution-store';
export { InMemorySessionStore } from './persistence/in-memory-session-store';
export type { Checkpoint } from './persistence/journal/checkpoint';
export type { LoadedSession, SessionStore } from './persistence/session-store';
export { SqliteExecutionStore } from './persistence/sqlite-execution-store';
export { SqliteSessionStore } from './persistence/sqlite-session-store';
export {
  type Recording,
  type ReplayDivergence,
  ReplayDivergenceError,
  type ReplayDriverOptions,
  replayDriver,
} from './replay/replay-driver';
export { type UnreplayableReason, UnreplayableRunError } from './replay/unreplayable-run';
export type { SubagentDefinition } from './runtime/agent-definition';
export { type AgentDefinition, InvalidDefinitionError } from './runtime/agent-definition';
export { ChatTurnConflictError } from './runtime/chat-turn-conflict-error';
export {
  type Agent,
  type AgentActor,
  type AgentMigration,
  AgentMigrationError,
  AgentRuntimeError,
  type ApprovalInput,
  type CreateActorOptions,
  createAgent,
  type ExecuteOptions,
  MissingRecordedResultError,
  type ReplayOptions,
  type ReplayResult,
  type RunInputOptions,
  type SessionUpgradeReport,
  type UpgradeReport,
  type UpgradeSource,
  type UpgradeVerdict,
  type VerifyUpgradeOptions,
} from './runtime/create-agent';
export { SubagentIntentError } from './runtime/nested-intents';
export { AgentStopError } from './state/agent-stop-error';
export type { EventSource, RunListener, SubagentOrigin } from './state/event-source';
export * from './state/index';
export type {
  AgentEventType,
  ContextCompactedEvent,
  LedgerReservedEvent,
  LedgerSettledEvent,
  ReportEvent,
  SummaryFallback,
  ToolReconciledEvent,
} from './state/loop-events';
export { SubagentBudgetExhaustedError } from './subagents/sibling-share';
export {
  DEFAULT_MAX_DEPTH,
  SubagentDepthExceededError,
  SubagentFailedError,
  type SubagentsConfig,
} from './subagents/subagent-definition';
export type { ReconcileOutcome, ReconcileRequest, ToolReconcile } from './tools/define-tool';
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
export { ReconcileError, type ReconcileErrorCode } from './tools/reconcile-call';
export { ToolTimeoutError } from './tools/tool-timeout-error';
export { AgentStream } from './ui/agent-stream';
