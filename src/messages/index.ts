/**
 * Every conversion between a state's stored messages and the AI SDK's shapes: ModelMessages, a
 * model's prompt, a model's answer, UI messages.
 */
export { fromModelMessages, messagesFromModelMessages, toModelMessages } from './model-messages';
export type { FileData, JSONValue, ModelMessage, ModelMessageInput, PromptMessage } from './shapes';
export { toChatUIMessages, toUIMessages } from './ui-messages';
export type { ChatUIMessage, ChatUIMessagePart, UIMessage, UIMessagePart, UIToolPart } from './ui-parts';
