export { toChatUIMessages, toUIMessages } from '../messages/ui-messages';
export type { UIMessage, UIMessagePart } from '../messages/ui-parts';
export { AgentStream, type RunStarter, type UIStreamReadOptions } from './agent-stream';
export type { DecisionContinuation } from './chat-approvals';
export { type ChatHandlerOptions, createChatHandler } from './chat-handler';
export {
  type ChatJobStream,
  type ChatPoolClient,
  type PoolChatHandlerOptions,
  STEER_ID,
} from './chat-pool-handler';
export { type ChatDecision, type ChatRequest, ChatRequestError, parseChatRequest } from './chat-request';
export type { ChatAccess, ChatAction, ChatHandler, LedgerScopesOf, WhileRunning } from './chat-routes';
export { AI_SDK_VERSION_HEADER, type AiSdkVersion } from './client-version';
export { toNodeHandler } from './node-handler';
export { mendRestartedSteps, type StepRestartedData, stepRestartedChunk } from './step-restart';
export {
  type HandedOff,
  handOffId,
  InMemoryStreamStore,
  StreamNotOpenError,
  type StreamStore,
  type StreamStoreOptions,
} from './stream-store';
export { StreamWriter, type StreamWriterOptions } from './stream-writer';
export type {
  RunEntry,
  RunOutcome,
  SubagentOrigin,
  SubagentProgress,
  UIMessageStreamOptions,
  UIStreamContinuation,
} from './ui-chunk-mapper';
export {
  type ChatUIMessage,
  type ChatUIMessagePart,
  UI_MESSAGE_STREAM_HEADERS,
  type UIFinishReason,
  type UIMessageChunk,
  type UIToolPart,
} from './ui-message';
export { toUIMessageChunks } from './ui-message-chunks';
