/**
 * `agent-machine/internal`: the chart's protocol and the plumbing of the runtime, for custom
 * runtimes and drivers. These names may change in any release; an app needs none of them.
 * The main entry still exports them, marked deprecated, until the next release
 * (src/deprecated-exports.ts).
 */
export {
  type AgentRef,
  agentLoop,
  type LoopEvent,
  type LoopInput,
  NotProvidedError,
  type StepCheck,
  type WorkerAnswer,
  type WorkerInput,
  type WorkRequest,
} from '../machines/agentLoop';
export {
  allMessages,
  conversationWithCurrentToolTrace,
  type MessageCompiler,
} from './drivers/message-compiler';
export { parseArgs, toPrompt } from './drivers/model-driver';
export { type AnsweredCall, callModels } from './drivers/model-fallback';
export { REACT_TEXT_KEY, toReActPrompt } from './drivers/react-driver';
export {
  OBSERVATION_STOP,
  parseReActReply,
  type ReActReply,
  type ReActToolDescription,
  reactCorrection,
  reactInstructions,
} from './drivers/react-protocol';
export { digestOf, stepRequest } from './drivers/request-digest';
export { SCRIPT_CURSOR_KEY } from './drivers/scripted-driver';
export { AppendOnlyList } from './state/append-only-list';
export { BUDGET_GUARD, budgetSignal } from './state/budget-signal';
export { newId } from './state/ids';
export { firstDifference, type JsonDifference } from './state/json-difference';
export { MAX_VALUE_DEPTH, toJsonValue } from './state/json-value';
export { type EventIds, eventIds, stepEventIds } from './state/loop-events';
export { agentStateSchema } from './state/schemas';
export { stopReasonPriority } from './state/stop-reason';
export { type SubagentRunner, subagentInputSchema, subagentTool } from './subagents/subagent-tool';
export { executeTools, runTools, type ToolExecutorOptions } from './tools/tool-executor';
export { toolResultMessage } from './tools/tool-result-message';
