/**
 * Names the main entry exported before they moved to `agent-machine/internal`
 * (the chart's protocol and the runtime's plumbing): deprecated there for one release, each its new home's own value.
 */
import * as internal from '../internal';

/** @deprecated Import from `agent-machine/internal`. */
export const agentLoop = internal.agentLoop;
/** @deprecated Import from `agent-machine/internal`. */
export const agentStateSchema = internal.agentStateSchema;
/** @deprecated Import from `agent-machine/internal`. */
export const allMessages = internal.allMessages;
/** @deprecated Import from `agent-machine/internal`. */
export type AnsweredCall = internal.AnsweredCall;
/** @deprecated Import from `agent-machine/internal`. */
export const AppendOnlyList = internal.AppendOnlyList;
/** @deprecated Import from `agent-machine/internal`. */
export type AppendOnlyList<T> = internal.AppendOnlyList<T>;
/** @deprecated Import from `agent-machine/internal`. */
export const BUDGET_GUARD = internal.BUDGET_GUARD;
/** @deprecated Import from `agent-machine/internal`. */
export const budgetSignal = internal.budgetSignal;
/** @deprecated Import from `agent-machine/internal`. */
export const callModels = internal.callModels;
/** @deprecated Import from `agent-machine/internal`. */
export const conversationWithCurrentToolTrace = internal.conversationWithCurrentToolTrace;
/** @deprecated Import from `agent-machine/internal`. */
export const digestOf = internal.digestOf;
/** @deprecated Import from `agent-machine/internal`. */
export const eventIds = internal.eventIds;
/** @deprecated Import from `agent-machine/internal`. */
export type EventIds = internal.EventIds;
/** @deprecated Import from `agent-machine/internal`. */
export const executeTools = internal.executeTools;
/** @deprecated Import from `agent-machine/internal`. */
export const firstDifference = internal.firstDifference;
/** @deprecated Import from `agent-machine/internal`. */
export type JsonDifference = internal.JsonDifference;
/** @deprecated Import from `agent-machine/internal`. */
export type LoopEvent = internal.LoopEvent;
/** @deprecated Import from `agent-machine/internal`. */
export type LoopInput = internal.LoopInput;
/** @deprecated Import from `agent-machine/internal`. */
export const MAX_VALUE_DEPTH = internal.MAX_VALUE_DEPTH;
/** @deprecated Import from `agent-machine/internal`. */
export type MessageCompiler = internal.MessageCompiler;
/** @deprecated Import from `agent-machine/internal`. */
export const newId = internal.newId;
/** @deprecated Import from `agent-machine/internal`. */
export const OBSERVATION_STOP = internal.OBSERVATION_STOP;
/** @deprecated Import from `agent-machine/internal`. */
export const parseArgs = internal.parseArgs;
/** @deprecated Import from `agent-machine/internal`. */
export const parseReActReply = internal.parseReActReply;
/** @deprecated Import from `agent-machine/internal`. */
export const REACT_TEXT_KEY = internal.REACT_TEXT_KEY;
/** @deprecated Import from `agent-machine/internal`. */
export const reactCorrection = internal.reactCorrection;
/** @deprecated Import from `agent-machine/internal`. */
export const reactInstructions = internal.reactInstructions;
/** @deprecated Import from `agent-machine/internal`. */
export type ReActReply = internal.ReActReply;
/** @deprecated Import from `agent-machine/internal`. */
export type ReActToolDescription = internal.ReActToolDescription;
/** @deprecated Import from `agent-machine/internal`. */
export const runTools = internal.runTools;
/** @deprecated Import from `agent-machine/internal`. */
export const SCRIPT_CURSOR_KEY = internal.SCRIPT_CURSOR_KEY;
/** @deprecated Import from `agent-machine/internal`. */
export type StepCheck = internal.StepCheck;
/** @deprecated Import from `agent-machine/internal`. */
export const stepEventIds = internal.stepEventIds;
/** @deprecated Import from `agent-machine/internal`. */
export const stepRequest = internal.stepRequest;
/** @deprecated Import from `agent-machine/internal`. */
export const stopReasonPriority = internal.stopReasonPriority;
/** @deprecated Import from `agent-machine/internal`. */
export const subagentInputSchema = internal.subagentInputSchema;
/** @deprecated Import from `agent-machine/internal`. */
export type SubagentRunner = internal.SubagentRunner;
/** @deprecated Import from `agent-machine/internal`. */
export const subagentTool = internal.subagentTool;
/** @deprecated Import from `agent-machine/internal`. */
export const toJsonValue = internal.toJsonValue;
/** @deprecated Import from `agent-machine/internal`. */
export type ToolExecutorOptions = internal.ToolExecutorOptions;
/** @deprecated Import from `agent-machine/internal`. */
export const toolResultMessage = internal.toolResultMessage;
/** @deprecated Import from `agent-machine/internal`. */
export const toPrompt = internal.toPrompt;
/** @deprecated Import from `agent-machine/internal`. */
export const toReActPrompt = internal.toReActPrompt;
/** @deprecated Import from `agent-machine/internal`. */
export type WorkerAnswer = internal.WorkerAnswer;
/** @deprecated Import from `agent-machine/internal`. */
export type WorkerInput = internal.WorkerInput;
/** @deprecated Import from `agent-machine/internal`. */
export type WorkRequest = internal.WorkRequest;
