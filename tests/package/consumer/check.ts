// Type-checked (never run) under nodenext, node16 and bundler with skipLibCheck false: the packed
// types resolve, name the AI SDK's models of the installed major, and are not `any`.
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import {
  type Agent,
  AgentState,
  createAgent,
  type Driver,
  type LanguageModel,
  modelDriver,
  type RedisConnection,
} from 'agent-machine';

const model = createOpenAICompatible({ name: 'local', baseURL: 'http://127.0.0.1:1' }).chatModel('m');
const asLibraryModel: LanguageModel = model;
const agent: Agent = createAgent({
  model,
  modelOptions: { stream: true, callOptions: { toolChoice: { type: 'required' } } },
});
const driver: Driver = modelDriver(asLibraryModel);
const state: AgentState = AgentState.empty().withUserMessage('hi');
const status: string = state.status();
const connection: RedisConnection = { host: '127.0.0.1', port: 6379, tls: {} };
// @ts-expect-error createAgent is typed (not any): a number is no model
createAgent({ model: 42 });
// @ts-expect-error finalResponse returns a string or null, not a number
const wrong: number = state.finalResponse();

export { agent, connection, driver, status, wrong };
