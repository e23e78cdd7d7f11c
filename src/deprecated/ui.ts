/**
 * Names the main entry exported before they moved to `agent-machine/ui`
 * (the chat server and UI streams): deprecated there for one release, each its new home's own value.
 */
import * as ui from '../ui/index';

/** @deprecated Import from `agent-machine/ui`. */
export const AI_SDK_VERSION_HEADER = ui.AI_SDK_VERSION_HEADER;
/** @deprecated Import from `agent-machine/ui`. */
export type AiSdkVersion = ui.AiSdkVersion;
/** @deprecated Import from `agent-machine/ui`. */
export type ChatAccess = ui.ChatAccess;
/** @deprecated Import from `agent-machine/ui`. */
export type ChatAction = ui.ChatAction;
/** @deprecated Import from `agent-machine/ui`. */
export type ChatDecision = ui.ChatDecision;
/** @deprecated Import from `agent-machine/ui`. */
export type ChatHandler = ui.ChatHandler;
/** @deprecated Import from `agent-machine/ui`. */
export type ChatHandlerOptions = ui.ChatHandlerOptions;
/** @deprecated Import from `agent-machine/ui`. */
export type ChatJobStream = ui.ChatJobStream;
/** @deprecated Import from `agent-machine/ui`. */
export type ChatPoolClient = ui.ChatPoolClient;
/** @deprecated Import from `agent-machine/ui`. */
export type ChatRequest = ui.ChatRequest;
/** @deprecated Import from `agent-machine/ui`. */
export const ChatRequestError = ui.ChatRequestError;
/** @deprecated Import from `agent-machine/ui`. */
export type ChatRequestError = ui.ChatRequestError;
/** @deprecated Import from `agent-machine/ui`. */
export const createChatHandler = ui.createChatHandler;
/** @deprecated Import from `agent-machine/ui`. */
export type DecisionContinuation = ui.DecisionContinuation;
/** @deprecated Import from `agent-machine/ui`. */
export type HandedOff = ui.HandedOff;
/** @deprecated Import from `agent-machine/ui`. */
export const handOffId = ui.handOffId;
/** @deprecated Import from `agent-machine/ui`. */
export const InMemoryStreamStore = ui.InMemoryStreamStore;
/** @deprecated Import from `agent-machine/ui`. */
export type InMemoryStreamStore = ui.InMemoryStreamStore;
/** @deprecated Import from `agent-machine/ui`. */
export type LedgerScopesOf = ui.LedgerScopesOf;
/** @deprecated Import from `agent-machine/ui`. */
export const mendRestartedSteps = ui.mendRestartedSteps;
/** @deprecated Import from `agent-machine/ui`. */
export const parseChatRequest = ui.parseChatRequest;
/** @deprecated Import from `agent-machine/ui`. */
export type PoolChatHandlerOptions = ui.PoolChatHandlerOptions;
/** @deprecated Import from `agent-machine/ui`. */
export type RunEntry = ui.RunEntry;
/** @deprecated Import from `agent-machine/ui`. */
export type RunOutcome = ui.RunOutcome;
/** @deprecated Import from `agent-machine/ui`. */
export type RunStarter = ui.RunStarter;
/** @deprecated Import from `agent-machine/ui`. */
export const STEER_ID = ui.STEER_ID;
/** @deprecated Import from `agent-machine/ui`. */
export const stepRestartedChunk = ui.stepRestartedChunk;
/** @deprecated Import from `agent-machine/ui`. */
export type StepRestartedData = ui.StepRestartedData;
/** @deprecated Import from `agent-machine/ui`. */
export const StreamNotOpenError = ui.StreamNotOpenError;
/** @deprecated Import from `agent-machine/ui`. */
export type StreamNotOpenError = ui.StreamNotOpenError;
/** @deprecated Import from `agent-machine/ui`. */
export type StreamStore = ui.StreamStore;
/** @deprecated Import from `agent-machine/ui`. */
export type StreamStoreOptions = ui.StreamStoreOptions;
/** @deprecated Import from `agent-machine/ui`. */
export const StreamWriter = ui.StreamWriter;
/** @deprecated Import from `agent-machine/ui`. */
export type StreamWriter = ui.StreamWriter;
/** @deprecated Import from `agent-machine/ui`. */
export type StreamWriterOptions = ui.StreamWriterOptions;
/** @deprecated Import from `agent-machine/ui`. */
export type SubagentProgress = ui.SubagentProgress;
/** @deprecated Import from `agent-machine/ui`. */
export const toNodeHandler = ui.toNodeHandler;
/** @deprecated Import from `agent-machine/ui`. */
export const toUIMessageChunks = ui.toUIMessageChunks;
/** @deprecated Import from `agent-machine/ui`. */
export const UI_MESSAGE_STREAM_HEADERS = ui.UI_MESSAGE_STREAM_HEADERS;
/** @deprecated Import from `agent-machine/ui`. */
export type UIFinishReason = ui.UIFinishReason;
/** @deprecated Import from `agent-machine/ui`. */
export type UIMessageChunk = ui.UIMessageChunk;
/** @deprecated Import from `agent-machine/ui`. */
export type UIMessageStreamOptions = ui.UIMessageStreamOptions;
/** @deprecated Import from `agent-machine/ui`. */
export type UIStreamContinuation = ui.UIStreamContinuation;
/** @deprecated Import from `agent-machine/ui`. */
export type UIStreamReadOptions = ui.UIStreamReadOptions;
/** @deprecated Import from `agent-machine/ui`. */
export type WhileRunning = ui.WhileRunning;
