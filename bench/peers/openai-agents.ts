/**
 * The OpenAI Agents SDK: `new Agent({ model, tools: [tool(...)] })` run by a `Runner` with tracing
 * disabled and `maxTurns: N + 1`. The model is a custom `Model` whose `getResponse` returns the
 * script as normalized output items: a `function_call` item (arguments as JSON text) until step N,
 * then an assistant `message` with `output_text`. (`ScriptedModel` from '@openai/agents/testing'
 * deep-copies every request into its call log, test-double work that would be billed to the SDK.)
 */
import {
  Agent,
  type AgentInputItem,
  type Model,
  type ModelRequest,
  type ModelResponse,
  Runner,
  setTracingDisabled,
  tool,
  Usage,
} from '@openai/agents';
import { z } from 'zod';
import { type Adapter, answerAt, type Counters, expectRun, QUESTION, stepAfter, versionOf } from './common';

setTracingDisabled(true);

function lastToolCallId(input: ModelRequest['input']): string | undefined {
  if (typeof input === 'string') return undefined;
  const last = input[input.length - 1] as AgentInputItem | undefined;
  return last?.type === 'function_call_result' ? last.callId : undefined;
}

/** A Model playing the N-step script. */
class ScriptModel implements Model {
  constructor(
    private readonly steps: number,
    private readonly counters: Counters,
  ) {}

  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    this.counters.modelCalls++;
    const answer = answerAt(stepAfter(lastToolCallId(request.input)), this.steps);
    const usage = new Usage({ requests: 1, inputTokens: 10, outputTokens: 5, totalTokens: 15 });
    if (answer.kind === 'tool') {
      return {
        usage,
        output: [
          {
            type: 'function_call',
            id: answer.id,
            callId: answer.id,
            name: 'echo',
            status: 'completed',
            arguments: JSON.stringify({ n: answer.n }),
          },
        ],
      };
    }
    return {
      usage,
      output: [
        {
          type: 'message',
          role: 'assistant',
          status: 'completed',
          content: [{ type: 'output_text', text: answer.text }],
        },
      ],
    };
  }

  // biome-ignore lint/correctness/useYield: the benchmark never streams
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error('not used: the benchmark runs without streaming');
  }
}

const counters: Counters = { modelCalls: 0, toolCalls: 0 };

const echo = tool({
  name: 'echo',
  description: 'Echo a number',
  parameters: z.object({ n: z.number() }),
  execute: async ({ n }) => {
    counters.toolCalls++;
    return n;
  },
});

export const openAiAgentsAdapter: Adapter = {
  name: 'OpenAI Agents SDK',
  version: versionOf('@openai/agents'),
  counters,
  setup(steps) {
    const agent = new Agent({ name: 'bench', model: new ScriptModel(steps, counters), tools: [echo] });
    const runner = new Runner({ tracingDisabled: true });
    return {
      async run() {
        const result = await runner.run(agent, QUESTION, { maxTurns: steps + 1 });
        let toolCalls = 0;
        for (const item of result.newItems) {
          if (item.type === 'tool_call_output_item') toolCalls++;
        }
        expectRun('OpenAI Agents SDK', steps, {
          modelCalls: result.rawResponses.length,
          toolCalls,
          text: result.finalOutput,
        });
        return result;
      },
    };
  },
};
