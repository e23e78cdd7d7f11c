export { AgentStream, type RunStarter, type UIStreamReadOptions } from './agent-stream';
export { type ChatHandler, type ChatHandlerOptions, createChatHandler } from './chat-handler';
export { type ChatDecision, type ChatRequest, ChatRequestError, parseChatRequest } from './chat-request';
export { toNodeHandler } from './node-handler';
export type {
  RunEntry,
  RunOutcome,
  SubagentOrigin,
  SubagentProgress,
  UIMessageStreamOptions,
  UIStreamContinuation,
} from './ui-chunk-mapper';
export {
  UI_MESSAGE_STREAM_HEADERS,
  type UIFinishReason,
  type UIMessage,
  type UIMessageChunk,
  type UIMessagePart,
  type UIToolPart,
} from './ui-message';
export { toUIMessageChunks, toUIMessages } from './ui-messages';
