export { AgentContext, DEFAULT_SECTION, MessageStore, type ResponseFormat } from './agent-context';
export { AgentError } from './agent-error';
export { AgentState, type AgentStateProps, type LlmConfig } from './agent-state';
export { AgentStep, InferenceResponse, type StepRequest } from './agent-step';
export { AgentStepType } from './agent-step-type';
export { AppendOnlyList } from './append-only-list';
export { type ApprovalDecision, ApprovalRequest } from './approval';
export { ApprovalError } from './approval-error';
export {
  AgentMachineError,
  InvalidArgumentError,
  InvalidReturnValueError,
  InvalidStateError,
  NoRunInProgressError,
  RunInProgressError,
} from './errors';
export { type BudgetLimits, type BudgetUsage, ExecutionBudget } from './execution-budget';
export { ExecutionContinuation } from './execution-continuation';
export { ExecutionState } from './execution-state';
export { ExecutionStatus, isTerminalStatus } from './execution-status';
export { newId } from './ids';
export { InvalidUsageError } from './inference-admission';
export { firstDifference, type JsonDifference } from './json-difference';
export { MAX_VALUE_DEPTH, toJsonValue, UnsavableValueError, ValueTooDeepError } from './json-value';
export {
  type ContentPart,
  Message,
  type MessageInput,
  type MessageRole,
  type ProviderMetadata,
  type ToolCall,
  textOf,
} from './message';
export type { ApprovalReason, ApprovalRoute, PendingApproval } from './pending-approval';
export { type AgentStateJSON, agentStateSchema, FORMAT_VERSION } from './schemas';
export { StepExecution } from './step-execution';
export { failsTheRun, StopReason, stopReasonPriority, wasForceStopped } from './stop-reason';
export { StopSignal } from './stop-signal';
export { ToolExecution, type ToolResolution } from './tool-execution';
export { Usage } from './usage';
