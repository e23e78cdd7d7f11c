// Type-checked (never run) under nodenext, node16 and bundler with skipLibCheck false: the packed
// types resolve, name the AI SDK's models and messages of the installed major, and are not `any`.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import {
  type Agent,
  AgentState,
  createAgent,
  type Driver,
  fromModelMessages,
  type LanguageModel,
  modelDriver,
  type RedisConnection,
  toModelMessages,
  toUIMessages,
} from 'agent-machine';
import type { ModelMessage, UIMessage } from 'ai';

const model = createOpenAICompatible({ name: 'local', baseURL: 'http://127.0.0.1:1' }).chatModel('m');
const asLibraryModel: LanguageModel = model;
const agent: Agent = createAgent({
  model,
  modelOptions: {
    stream: true,
    callOptions: { toolChoice: { type: 'required' } },
    prepareStep: (state) => (state.stepCount() > 0 ? { model, activeTools: [] } : undefined),
  },
});
const driver: Driver = modelDriver(asLibraryModel);
const state: AgentState = AgentState.empty().withUserMessage([
  { type: 'text', text: 'What is this?' },
  { type: 'file', mediaType: 'image/png', data: 'iVBORw==' },
]);
const status: string = state.status();
const connection: RedisConnection = { host: '127.0.0.1', port: 6379, tls: {} };
// The conversation as the installed AI SDK's own message types, and back.
const modelMessages: ModelMessage[] = toModelMessages(state);
const uiMessages: UIMessage[] = toUIMessages(state);
const restored: AgentState = fromModelMessages(modelMessages);
// @ts-expect-error createAgent is typed (not any): a number is no model
createAgent({ model: 42 });
// @ts-expect-error finalResponse returns a string or null, not a number
const wrong: number = state.finalResponse();

export { agent, connection, driver, restored, status, uiMessages, wrong };
