/** AgentState and its parts, as an app reads them (the main entry re-exports this). */
export { AgentContext, DEFAULT_SECTION, MessageStore, type ResponseFormat } from './agent-context';
export { AgentError } from './agent-error';
export { AgentState, type AgentStateProps, type LlmConfig } from './agent-state';
export { AgentStep, InferenceResponse, type StepRequest } from './agent-step';
export { AgentStepType } from './agent-step-type';
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
export { InvalidUsageError } from './inference-admission';
export { UnsavableValueError, ValueTooDeepError } from './json-value';
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
export { type AgentStateJSON, FORMAT_VERSION } from './schemas';
export { StepExecution } from './step-execution';
export { failsTheRun, StopReason, wasForceStopped } from './stop-reason';
export { StopSignal } from './stop-signal';
export { ToolExecution, type ToolResolution } from './tool-execution';
export { Usage } from './usage';
