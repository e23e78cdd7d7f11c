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
  toModelMessages,
  toUIMessages,
} from 'agent-machine';
import { createAgentClient, type RedisConnection } from 'agent-machine/distributed';
import { renderRunViewer } from 'agent-machine/inspect';
import { agentLoop } from 'agent-machine/internal';
import { McpServers } from 'agent-machine/mcp';
import { SqliteSessionStore } from 'agent-machine/stores';
import { AgentTracing } from 'agent-machine/telemetry';
import { createAgentTestModel } from 'agent-machine/testing';
import { createChatHandler } from 'agent-machine/ui';
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
// A subagent's state, kept by a tool call and by a waiting approval, is an AgentState (the parts
// name it through a registered type): its methods are there, and it is neither never nor any.
const call = state.stepExecutions()[0]?.step().toolExecutions()[0];
const childStatus: string | undefined = call?.childState()?.status();
const waitingChild: AgentState | undefined = state.approval()?.children.p1?.withUserMessage('go on');
// @ts-expect-error a child state is no number (it would be accepted if it were any)
const childAsNumber: number | null | undefined = call?.childState();
// @ts-expect-error finalResponse returns a string or null, not a number
const wrong: number = state.finalResponse();

export {
  agent,
  childAsNumber,
  childStatus,
  connection,
  driver,
  restored,
  status,
  subpaths,
  uiMessages,
  waitingChild,
  wrong,
};

// Each subpath entry's names are the main entry's own (one declaration, not a copy): its own
// (SqliteSessionStore) and, until the next release, its deprecated aliases of the names that moved.
const subpaths: [
  typeof import('agent-machine').SqliteSessionStore,
  typeof import('agent-machine').createAgentClient,
  typeof import('agent-machine').renderRunViewer,
  typeof import('agent-machine').createChatHandler,
  typeof import('agent-machine').McpServers,
  typeof import('agent-machine').AgentTracing,
  typeof import('agent-machine').createAgentTestModel,
  typeof import('agent-machine').agentLoop,
] = [
  SqliteSessionStore,
  createAgentClient,
  renderRunViewer,
  createChatHandler,
  McpServers,
  AgentTracing,
  createAgentTestModel,
  agentLoop,
];
