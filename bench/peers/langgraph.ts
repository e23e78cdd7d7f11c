/**
 * LangGraph.js through LangChain's `createAgent` (the LangGraph ReAct agent graph; `createReactAgent`
 * from '@langchain/langgraph/prebuilt' is its deprecated predecessor) with the `echo` tool (zod
 * schema, LangChain `tool()`) and `recursionLimit: 2N + 10`. The model is a fake tool-calling chat
 * model (a `BaseChatModel` whose `_generate` plays the script): an `AIMessage` with `tool_calls`
 * until step N, then an `AIMessage` with the text. (`fakeModel()` from 'langchain' queues answers
 * by call index, so one instance could not serve concurrent runs; it also copies every prompt into
 * its call log.)
 */
import { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import type { ChatResult } from '@langchain/core/outputs';
import { createAgent, tool } from 'langchain';
import { z } from 'zod';
import { type Adapter, answerAt, type Counters, expectRun, QUESTION, stepAfter, versionOf } from './common';

function lastToolCallId(messages: BaseMessage[]): string | undefined {
  const last = messages[messages.length - 1];
  return last && ToolMessage.isInstance(last) ? last.tool_call_id : undefined;
}

/** A chat model playing the N-step script; tools bound to it change nothing. */
export class ScriptChatModel extends BaseChatModel {
  constructor(
    private readonly steps: number,
    private readonly counters: Counters,
  ) {
    super({});
  }

  _llmType(): string {
    return 'bench-script';
  }

  override bindTools(): this {
    return this;
  }

  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    this.counters.modelCalls++;
    const answer = answerAt(stepAfter(lastToolCallId(messages)), this.steps);
    const usage_metadata = { input_tokens: 10, output_tokens: 5, total_tokens: 15 };
    const message =
      answer.kind === 'tool'
        ? new AIMessage({
            content: '',
            tool_calls: [{ id: answer.id, name: 'echo', args: { n: answer.n }, type: 'tool_call' }],
            usage_metadata,
          })
        : new AIMessage({ content: answer.text, usage_metadata });
    return { generations: [{ text: typeof message.content === 'string' ? message.content : '', message }] };
  }
}

const counters: Counters = { modelCalls: 0, toolCalls: 0 };

const echo = tool(
  async ({ n }: { n: number }) => {
    counters.toolCalls++;
    return n;
  },
  { name: 'echo', description: 'Echo a number', schema: z.object({ n: z.number() }) },
);

export const langGraphAdapter: Adapter = {
  name: 'LangGraph createAgent',
  version: `${versionOf('@langchain/langgraph')}, ${versionOf('langchain')}, ${versionOf('@langchain/core')}`,
  counters,
  setup(steps) {
    const agent = createAgent({ model: new ScriptChatModel(steps, counters), tools: [echo] });
    const config = { recursionLimit: 2 * steps + 10 };
    return {
      async run() {
        const result = await agent.invoke({ messages: [new HumanMessage(QUESTION)] }, config);
        let modelCalls = 0;
        let toolCalls = 0;
        for (const m of result.messages) {
          if (AIMessage.isInstance(m)) modelCalls++;
          else if (ToolMessage.isInstance(m) && m.content === m.tool_call_id.slice(5)) toolCalls++;
        }
        const last = result.messages[result.messages.length - 1];
        expectRun('LangGraph', steps, { modelCalls, toolCalls, text: last?.content });
        return result;
      },
    };
  },
};
