export type { DecisionContinuation } from '../chat/chat-approvals';
export { type ChatHandlerOptions, createChatHandler } from '../chat/chat-handler';
export {
  type ChatJobStream,
  type ChatPoolClient,
  type PoolChatHandlerOptions,
  STEER_ID,
} from '../chat/chat-pool-handler';
export {
  type ChatDecision,
  type ChatRequest,
  ChatRequestError,
  parseChatRequest,
} from '../chat/chat-request';
export type { ChatAccess, ChatAction, ChatHandler, LedgerScopesOf, WhileRunning } from '../chat/chat-routes';
export { AI_SDK_VERSION_HEADER, type AiSdkVersion } from '../chat/client-version';
export { toNodeHandler } from '../chat/node-handler';
export { mendRestartedSteps, type StepRestartedData, stepRestartedChunk } from '../chat/step-restart';
export {
  type HandedOff,
  handOffId,
  InMemoryStreamStore,
  StreamNotOpenError,
  type StreamStore,
  type StreamStoreOptions,
} from '../chat/stream-store';
export { StreamWriter, type StreamWriterOptions } from '../chat/stream-writer';
export { toChatUIMessages, toUIMessages } from '../messages/ui-messages';
export type { UIMessage, UIMessagePart } from '../messages/ui-parts';
export { AgentStream, type RunStarter, type UIStreamReadOptions } from './agent-stream';
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
