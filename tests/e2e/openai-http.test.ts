import { describe, expect, it } from 'vitest';
import type { AgentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { AgentStepType } from '../../src/state/agent-step-type';
import { ExecutionStatus } from '../../src/state/execution-status';
import { StopReason } from '../../src/state/stop-reason';
import { add, waitForState } from '../support/agents';
import {
  localModel,
  type OpenAIServer,
  type Reply,
  serverPerTest,
  startOpenAIServer,
  textReply,
  toolCallReply,
} from '../support/openai-server';

const start = serverPerTest();
const question = () => AgentState.empty().withUserMessage('What is 2 + 3?');
const agentOn = (s: OpenAIServer, more: Partial<AgentDefinition> = {}) =>
  createAgent({
    model: localModel(s),
    tools: { add },
    systemPrompt: 'You add numbers.',
    ...more,
    modelOptions: { retryDelayMs: 1, ...more.modelOptions },
  });
const addThenAnswer = (): Reply[] => [
  toolCallReply([{ id: 'call_1', name: 'add', arguments: { a: 2, b: 3 } }], { content: 'Let me add.' }),
  textReply('The answer is 5.'),
];

/** Runs the agent as an actor, collecting the `text.delta` events it emits. */
async function runCollectingDeltas(definition: AgentDefinition['modelOptions'], s: OpenAIServer) {
  const actor = agentOn(s, { modelOptions: definition }).createActor(question());
  const deltas: Array<{ delta: string; stepNumber: number; agentId: string; executionId: string }> = [];
  actor.on('text.delta', (event) => deltas.push(event));
  actor.start();
  actor.send({ type: 'execute' });
  await waitForState(actor, (snapshot) =>
    ['completed', 'stopped', 'failed'].includes(snapshot.value as string),
  );
  const state = actor.getSnapshot().context.state;
  actor.stop();
  return { state, deltas };
}

describe('an agent on an OpenAI-compatible HTTP server (@ai-sdk/openai-compatible)', () => {
  it('runs a tool loop and sends the conversation, tools, tool calls and tool results', async () => {
    const s = await start(addThenAnswer());
    const state = await agentOn(s).execute(question());

    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.stopReason()).toBe(StopReason.Completed);
    expect(state.stepCount()).toBe(2);
    expect(state.steps().map((step) => step.stepType())).toEqual([
      AgentStepType.ToolExecution,
      AgentStepType.FinalResponse,
    ]);
    expect(state.steps()[0]?.finishReason()).toBe('tool-calls');
    expect(state.steps()[0]?.requestedToolCalls()).toEqual([
      { id: 'call_1', name: 'add', args: { a: 2, b: 3 } },
    ]);
    expect(state.steps()[0]?.toolExecutions()[0]?.value()).toBe(5);
    expect(state.finalResponse()).toBe('The answer is 5.');
    expect(state.usage()).toEqual({ inputTokens: 30, outputTokens: 7, totalTokens: 37, cost: 0 });

    expect(s.requests).toHaveLength(2);
    const [first, second] = s.requests;
    expect(first?.path).toBe('/v1/chat/completions');
    expect(first?.body).toMatchObject({
      model: 'm',
      messages: [
        { role: 'system', content: 'You add numbers.' },
        { role: 'user', content: 'What is 2 + 3?' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'add',
            description: 'Add two numbers',
            parameters: expect.objectContaining({ type: 'object', required: ['a', 'b'] }),
          },
        },
      ],
      tool_choice: 'auto',
    });
    expect(first?.body).not.toHaveProperty('stream');
    expect(second?.body.messages.slice(2)).toEqual([
      {
        role: 'assistant',
        content: 'Let me add.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":3}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: '5' },
    ]);
  });

  it('retries a 429 and then completes: two requests, one step', async () => {
    const s = await start([{ type: 'error', status: 429, message: 'Rate limit exceeded' }, textReply('5')]);
    const state = await agentOn(s).execute(question());

    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.stopReason()).toBe(StopReason.Completed);
    expect(state.finalResponse()).toBe('5');
    expect(state.stepCount()).toBe(1);
    expect(state.errors()).toEqual([]);
    expect(s.requests).toHaveLength(2);
    expect(s.requests[1]?.body).toEqual(s.requests[0]?.body);
  });

  it('gives up on a 500 that never ends after maxRetries, recording the provider message and attempts', async () => {
    const s = await start([{ type: 'error', status: 500, message: 'The server had an error' }]);
    const state = await agentOn(s, { modelOptions: { maxRetries: 2 } }).execute(question());

    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.stopReason()).toBe(StopReason.ErrorForbade);
    expect(s.requests).toHaveLength(3);
    expect(state.stepCount()).toBe(1);
    expect(state.lastStep()?.errors()).toHaveLength(1);
    expect(state.lastStep()?.errors()[0]).toMatchObject({
      name: 'AI_APICallError',
      message: 'The server had an error (failed after 3 attempts)',
      code: null,
      details: { statusCode: 500 },
    });
    expect(state.stopSignal()?.message).toBe('The server had an error (failed after 3 attempts)');
  });

  it('fails at once, without retrying, on a malformed response body', async () => {
    const s = await start([{ type: 'raw', body: '{"choices": [ this is not json' }]);
    const state = await agentOn(s).execute(question());

    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.stopReason()).toBe(StopReason.ErrorForbade);
    expect(s.requests).toHaveLength(1);
    expect(state.lastStep()?.errors()[0]).toMatchObject({
      name: 'AI_APICallError',
      message: 'Invalid JSON response',
      details: { statusCode: 200 },
    });
  });

  it('does not retry a 400', async () => {
    const s = await start([{ type: 'error', status: 400, message: 'Unknown model m' }]);
    const state = await agentOn(s).execute(question());

    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(s.requests).toHaveLength(1);
    expect(state.lastStep()?.errors()[0]).toMatchObject({
      message: 'Unknown model m',
      details: { statusCode: 400 },
    });
  });

  it('stops a slow reply through the abort signal: Stopped, UserRequested, connection closed', async () => {
    const s = await start([{ type: 'hang' }]);
    const controller = new AbortController();
    const run = agentOn(s).execute(question(), { signal: controller.signal });
    await s.waitForRequests(1);
    controller.abort();
    const state = await run;

    expect(state.status()).toBe(ExecutionStatus.Stopped);
    expect(state.stopReason()).toBe(StopReason.UserRequested);
    expect(state.stepCount()).toBe(0);
    await s.waitForClientDisconnect();
    expect(s.clientDisconnects).toBe(1);
    expect(s.requests).toHaveLength(1);
  });

  it('streams: text deltas are emitted as text.delta events and the steps match the unstreamed run', async () => {
    const streamed = await start(addThenAnswer());
    const { state, deltas } = await runCollectingDeltas({ stream: true }, streamed);
    const plainServer = await startOpenAIServer(addThenAnswer());
    const plain = await agentOn(plainServer).execute(question());
    await plainServer.close();

    expect(streamed.requests.map((r) => r.body.stream)).toEqual([true, true]);
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.finalResponse()).toBe('The answer is 5.');
    expect(deltas.length).toBeGreaterThan(2);
    expect(
      deltas
        .filter((d) => d.stepNumber === 1)
        .map((d) => d.delta)
        .join(''),
    ).toBe('Let me add.');
    expect(
      deltas
        .filter((d) => d.stepNumber === 2)
        .map((d) => d.delta)
        .join(''),
    ).toBe('The answer is 5.');
    for (const d of deltas) {
      expect(d).toMatchObject({ agentId: state.agentId(), executionId: state.executionId() });
    }

    const summary = (s: AgentState) =>
      s.steps().map((step) => ({
        text: step.outputText(),
        toolCalls: step.requestedToolCalls(),
        finishReason: step.finishReason(),
        usage: step.usage(),
        results: step.toolExecutions().map((e) => e.value()),
        output: step.outputMessages().map((m) => [m.role, m.content, m.toolCalls ?? []]),
      }));
    expect(summary(state)).toEqual(summary(plain));
    expect(state.usage()).toEqual(plain.usage());
  });

  it('fails the step on an error in the stream, keeping the provider message, without retrying', async () => {
    const s = await start([{ type: 'stream-error', content: 'Hel', message: 'The model is overloaded' }]);
    const { state, deltas } = await runCollectingDeltas({ stream: true }, s);

    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.stopReason()).toBe(StopReason.ErrorForbade);
    expect(s.requests).toHaveLength(1);
    expect(deltas.map((d) => d.delta).join('')).toBe('Hel');
    expect(state.lastStep()?.errors()).toEqual([
      {
        name: 'ModelStreamError',
        message: 'The model is overloaded',
        code: 'MODEL_STREAM_ERROR',
        details: null,
      },
    ]);
  });

  it('retries a 429 that opens a stream', async () => {
    const s = await start([{ type: 'error', status: 429, message: 'Slow down' }, textReply('5')]);
    const { state, deltas } = await runCollectingDeltas({ stream: true }, s);

    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.finalResponse()).toBe('5');
    expect(deltas.map((d) => d.delta)).toEqual(['5']);
    expect(s.requests).toHaveLength(2);
  });

  it('tells the model when its tool arguments are not valid JSON, and the run recovers', async () => {
    const s = await start([
      toolCallReply([{ id: 'call_1', name: 'add', arguments: '{"a": 2, "b":' }]),
      toolCallReply([{ id: 'call_2', name: 'add', arguments: { a: 2, b: 3 } }]),
      textReply('5'),
    ]);
    const state = await agentOn(s).execute(question());

    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.steps().map((step) => step.stepType())).toEqual([
      AgentStepType.Error,
      AgentStepType.ToolExecution,
      AgentStepType.FinalResponse,
    ]);
    const error = state.steps()[0]?.errors()[0];
    expect(error).toMatchObject({ name: 'ToolArgumentsInvalid', code: 'INVALID_TOOL_ARGUMENTS' });
    expect(error?.message).toContain("Invalid arguments for tool 'add': the arguments are not valid JSON");
    expect(error?.message).toContain('Received: {"a": 2, "b":');
    const toolMessage = s.requests[1]?.body.messages.at(-1);
    expect(toolMessage).toMatchObject({ role: 'tool', tool_call_id: 'call_1' });
    expect(toolMessage.content).toContain('not valid JSON');
  });
});
