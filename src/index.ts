/**
 * The main entry: everything an app uses. The same names are also grouped by audience in subpath
 * entries: `agent-machine/stores`, `/distributed`, `/inspect`, `/ui`, `/mcp`, `/telemetry`,
 * `/testing`; the chart's protocol and plumbing for custom runtimes in `/internal` (re-exported
 * here, deprecated, until the next release).
 */
import * as internal from './internal';

export { type AgentEvent, type HookStage, LoopTag, StateId, statePath } from '../machines/agentLoop';
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
export { digestOf, stepRequest } from './drivers/request-digest';
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
export * from './inspect/index';
export * from './ledger/index';
export * from './mcp/index';
export * from './messages/index';
export * from './persistence/index';
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
export * from './telemetry/index';
export * from './testing/index';
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
export { executeTools, runTools, type ToolExecutorOptions } from './tools/tool-executor';
export { toolResultMessage } from './tools/tool-result-message';
export { ToolTimeoutError } from './tools/tool-timeout-error';
export * from './ui/index';

// ---- moved to `agent-machine/internal` (deprecated here; removed from the main entry in the next release)

/** @deprecated Import from `agent-machine/internal`: the chart, for custom runtimes. */
export const agentLoop = internal.agentLoop;
/** @deprecated Import from `agent-machine/internal`. */
export type LoopEvent = internal.LoopEvent;
/** @deprecated Import from `agent-machine/internal`. */
export type LoopInput = internal.LoopInput;
/** @deprecated Import from `agent-machine/internal`. */
export type StepCheck = internal.StepCheck;
/** @deprecated Import from `agent-machine/internal`. */
export type WorkerAnswer = internal.WorkerAnswer;
/** @deprecated Import from `agent-machine/internal`. */
export type WorkerInput = internal.WorkerInput;
/** @deprecated Import from `agent-machine/internal`. */
export type WorkRequest = internal.WorkRequest;
/** @deprecated Import from `agent-machine/internal`. */
export const allMessages = internal.allMessages;
/** @deprecated Import from `agent-machine/internal`. */
export const conversationWithCurrentToolTrace = internal.conversationWithCurrentToolTrace;
/** @deprecated Import from `agent-machine/internal`. */
export type MessageCompiler = internal.MessageCompiler;
/** @deprecated Import from `agent-machine/internal`. */
export const callModels = internal.callModels;
/** @deprecated Import from `agent-machine/internal`. */
export type AnsweredCall = internal.AnsweredCall;
/** @deprecated Import from `agent-machine/internal`. */
export const parseArgs = internal.parseArgs;
/** @deprecated Import from `agent-machine/internal`. */
export const toPrompt = internal.toPrompt;
/** @deprecated Import from `agent-machine/internal`. */
export const REACT_TEXT_KEY = internal.REACT_TEXT_KEY;
/** @deprecated Import from `agent-machine/internal`. */
export const toReActPrompt = internal.toReActPrompt;
/** @deprecated Import from `agent-machine/internal`. */
export const OBSERVATION_STOP = internal.OBSERVATION_STOP;
/** @deprecated Import from `agent-machine/internal`. */
export const parseReActReply = internal.parseReActReply;
/** @deprecated Import from `agent-machine/internal`. */
export type ReActReply = internal.ReActReply;
/** @deprecated Import from `agent-machine/internal`. */
export type ReActToolDescription = internal.ReActToolDescription;
/** @deprecated Import from `agent-machine/internal`. */
export const reactCorrection = internal.reactCorrection;
/** @deprecated Import from `agent-machine/internal`. */
export const reactInstructions = internal.reactInstructions;
/** @deprecated Import from `agent-machine/internal`. */
export const SCRIPT_CURSOR_KEY = internal.SCRIPT_CURSOR_KEY;
/** @deprecated Import from `agent-machine/internal`. */
export const BUDGET_GUARD = internal.BUDGET_GUARD;
/** @deprecated Import from `agent-machine/internal`. */
export const budgetSignal = internal.budgetSignal;
/** @deprecated Import from `agent-machine/internal`. */
export type EventIds = internal.EventIds;
/** @deprecated Import from `agent-machine/internal`. */
export const eventIds = internal.eventIds;
/** @deprecated Import from `agent-machine/internal`. */
export const stepEventIds = internal.stepEventIds;
/** @deprecated Import from `agent-machine/internal`. */
export type SubagentRunner = internal.SubagentRunner;
/** @deprecated Import from `agent-machine/internal`. */
export const subagentInputSchema = internal.subagentInputSchema;
/** @deprecated Import from `agent-machine/internal`. */
export const subagentTool = internal.subagentTool;
