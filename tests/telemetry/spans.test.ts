import { APICallError, type LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { context, SpanStatusCode, trace } from '@opentelemetry/api';
import { MockLanguageModelV4 } from 'ai/test';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import { InvalidDefinitionError, type SubagentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import type { TelemetryOptions } from '../../src/telemetry/telemetry-options';
import { defineTool } from '../../src/tools/define-tool';
import { add } from '../support/agents';
import { idOf, memoryTracer, parentOf, withContextManager } from '../support/otel';

const usage = (input: number, output: number): LanguageModelV4GenerateResult['usage'] => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});
const toolCall = (
  id: string,
  name = 'add',
  input: object = { a: 2, b: 3 },
): LanguageModelV4GenerateResult => ({
  content: [{ type: 'tool-call', toolCallId: id, toolName: name, input: JSON.stringify(input) }],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage: usage(10, 5),
  warnings: [],
});
const text = (value: string): LanguageModelV4GenerateResult => ({
  content: [{ type: 'text', text: value }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage: usage(20, 2),
  warnings: [],
});
const ask = (question = 'What is 2 + 3?') => AgentState.empty().withUserMessage(question);

describe('OpenTelemetry spans (telemetry: { tracer })', () => {
  const otel = memoryTracer();
  beforeEach(() => {
    otel.reset();
    // no global context manager: parent links must hold without one
    context.disable();
  });

  it('makes invoke_agent, chat and execute_tool spans with the GenAI attributes, children of the run', async () => {
    const model = new MockLanguageModelV4({ modelId: 'm-1', doGenerate: [toolCall('c1'), text('5')] });
    const agent = createAgent({
      name: 'calculator',
      model,
      tools: { add },
      telemetry: { tracer: otel.tracer },
    });
    const state = await agent.execute(ask());
    expect(state.status()).toBe(ExecutionStatus.Completed);

    const [run] = otel.named('invoke_agent calculator');
    expect(run).toBeDefined();
    if (!run) return;
    expect(parentOf(run)).toBe('');
    expect(run.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'calculator',
      'gen_ai.agent.id': state.agentId(),
      'gen_ai.usage.input_tokens': 30,
      'gen_ai.usage.output_tokens': 7,
      'agent_machine.status': 'completed',
      'agent_machine.steps': 2,
    });
    expect(run.attributes['gen_ai.conversation.id']).toBeUndefined();

    const chats = otel.named('chat m-1');
    expect(chats).toHaveLength(2);
    for (const chat of chats) expect(parentOf(chat)).toBe(idOf(run));
    expect(chats.map((c) => c.attributes)).toEqual([
      expect.objectContaining({
        'gen_ai.operation.name': 'chat',
        'gen_ai.request.model': 'm-1',
        'gen_ai.response.model': 'm-1',
        'gen_ai.usage.input_tokens': 10,
        'gen_ai.usage.output_tokens': 5,
        'gen_ai.response.finish_reasons': ['tool-calls'],
      }),
      expect.objectContaining({
        'gen_ai.response.finish_reasons': ['stop'],
        'gen_ai.usage.input_tokens': 20,
      }),
    ]);

    const [tool] = otel.named('execute_tool add');
    expect(tool && parentOf(tool)).toBe(idOf(run));
    expect(tool?.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'add',
      'gen_ai.tool.call.id': 'c1',
    });
    expect(tool?.status.code).toBe(SpanStatusCode.UNSET);
    // the tool ran between the two model calls
    const [first, second] = chats;
    expect(tool && first && tool.startTime >= first.endTime).toBe(true);
    // content is left out unless asked for
    for (const span of otel.spans()) {
      expect(span.attributes['gen_ai.input.messages']).toBeUndefined();
      expect(span.attributes['gen_ai.output.messages']).toBeUndefined();
      expect(span.attributes['gen_ai.tool.call.arguments']).toBeUndefined();
    }
    expect(second?.spanContext().traceId).toBe(run.spanContext().traceId);
  });

  it('records message content and tool arguments only with recordContent', async () => {
    const model = new MockLanguageModelV4({ modelId: 'm-1', doGenerate: [toolCall('c1'), text('5')] });
    const agent = createAgent({
      model,
      tools: { add },
      systemPrompt: 'You add.',
      telemetry: { tracer: otel.tracer, recordContent: true },
    });
    await agent.execute(ask());
    const [first, second] = otel.named('chat m-1');
    expect(JSON.parse(String(first?.attributes['gen_ai.input.messages']))).toEqual([
      { role: 'user', parts: [{ type: 'text', content: 'What is 2 + 3?' }] },
    ]);
    expect(JSON.parse(String(first?.attributes['gen_ai.output.messages']))).toEqual([
      {
        role: 'assistant',
        parts: [{ type: 'tool_call', id: 'c1', name: 'add', arguments: { a: 2, b: 3 } }],
        finish_reason: 'tool-calls',
      },
    ]);
    expect(JSON.parse(String(second?.attributes['gen_ai.input.messages'])).at(-1)).toEqual({
      role: 'tool',
      parts: [{ type: 'tool_call_response', id: 'c1', response: '5' }],
    });
    const [tool] = otel.named('execute_tool add');
    expect(JSON.parse(String(tool?.attributes['gen_ai.tool.call.arguments']))).toEqual({ a: 2, b: 3 });
  });

  it('marks a failed tool call and a failed model call as errors', async () => {
    const broken = defineTool({
      description: 'Breaks',
      inputSchema: z.object({}),
      execute: async () => {
        throw new Error('disk on fire');
      },
    });
    const model = new MockLanguageModelV4({
      modelId: 'm-1',
      doGenerate: async () => {
        if (model.doGenerateCalls.length === 1) return toolCall('c1', 'broken', {});
        throw new APICallError({
          message: 'Bad request',
          url: 'http://127.0.0.1/x',
          requestBodyValues: {},
          statusCode: 400,
        });
      },
    });
    const state = await createAgent({ model, tools: { broken }, telemetry: { tracer: otel.tracer } }).execute(
      ask(),
    );
    expect(state.status()).toBe(ExecutionStatus.Failed);

    const [tool] = otel.named('execute_tool broken');
    // the messages only with recordContent (span-content.test.ts): the type tells what failed
    expect(tool?.status).toEqual({ code: SpanStatusCode.ERROR, message: expect.stringMatching(/^Error /) });
    expect(tool?.attributes['error.type']).toBe('Error');
    const [, failedChat] = otel.named('chat m-1');
    expect(failedChat?.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: expect.stringMatching(/^AI_APICallError /),
    });
    const [run] = otel.named('invoke_agent agent');
    expect(run?.status.code).toBe(SpanStatusCode.ERROR);
    expect(run?.attributes['agent_machine.status']).toBe('failed');
  });

  it("nests a subagent's invoke_agent under its caller's execute_tool span, with no context manager", async () => {
    const researcher: SubagentDefinition = {
      description: 'Researches a topic',
      driver: scriptedDriver([
        { toolCalls: [{ id: 'inner', name: 'add', args: { a: 1, b: 1 } }] },
        { text: '2' },
      ]),
    };
    const root = createAgent({
      name: 'lead',
      driver: scriptedDriver([
        { toolCalls: [{ id: 'outer', name: 'researcher', args: { task: 'count' } }] },
        { text: 'done' },
      ]),
      tools: { add },
      subagents: { agents: { researcher } },
      telemetry: { tracer: otel.tracer },
    });
    const state = await root.execute(ask('Count'));
    expect(state.status()).toBe(ExecutionStatus.Completed);

    const [lead] = otel.named('invoke_agent lead');
    const [call] = otel.named('execute_tool researcher');
    const [child] = otel.named('invoke_agent researcher');
    const [inner] = otel.named('execute_tool add');
    expect(lead && call && child && inner).toBeTruthy();
    if (!lead || !call || !child || !inner) return;
    expect(parentOf(call)).toBe(idOf(lead));
    expect(parentOf(child)).toBe(idOf(call));
    expect(parentOf(inner)).toBe(idOf(child));
    const childChats = otel.named('chat').filter((s) => parentOf(s) === idOf(child));
    expect(childChats).toHaveLength(2);
    expect(new Set(otel.spans().map((s) => s.spanContext().traceId)).size).toBe(1);
    expect(child.attributes['gen_ai.agent.id']).not.toBe(lead.attributes['gen_ai.agent.id']);
  });

  it("joins the caller's active span when a context manager is registered", async () => {
    const agent = createAgent({
      driver: scriptedDriver([{ text: 'hi' }]),
      telemetry: { tracer: otel.tracer },
    });
    await withContextManager(() =>
      otel.tracer.startActiveSpan('http request', async (request) => {
        await agent.execute(ask('hello'));
        request.end();
      }),
    );
    const [request] = otel.named('http request');
    const [run] = otel.named('invoke_agent agent');
    expect(request && run && parentOf(run)).toBe(request && idOf(request));
  });

  it('names the session as the conversation and records the model that answered after a fallback', async () => {
    const primary = new MockLanguageModelV4({
      modelId: 'primary',
      doGenerate: async () => {
        throw new APICallError({
          message: 'nope',
          url: 'http://127.0.0.1/x',
          requestBodyValues: {},
          statusCode: 400,
        });
      },
    });
    const backup = new MockLanguageModelV4({ modelId: 'backup', doGenerate: [text('ok')] });
    const agent = createAgent({
      model: primary,
      fallbackModels: [backup],
      store: new InMemorySessionStore(),
      telemetry: { tracer: otel.tracer },
    });
    await agent.execute(ask(), { sessionId: 'chat-7' });
    const [run] = otel.named('invoke_agent agent');
    expect(run?.attributes['gen_ai.conversation.id']).toBe('chat-7');
    const [chat] = otel.named('chat primary');
    expect(chat?.attributes).toMatchObject({
      'gen_ai.request.model': 'primary',
      'gen_ai.response.model': 'backup',
    });
  });

  it('traces each execution of a long-lived actor as its own invoke_agent span', async () => {
    const agent = createAgent({
      driver: scriptedDriver([{ text: 'one' }, { text: 'two' }]),
      telemetry: { tracer: otel.tracer },
    });
    const actor = agent.createActor(AgentState.empty());
    const finished: string[] = [];
    actor.on('execution.finished', (e) => finished.push(e.executionId));
    actor.start();
    actor.send({ type: 'user.message', text: 'first' });
    await vi.waitFor(() => expect(finished).toHaveLength(1));
    actor.send({ type: 'user.message', text: 'second' });
    await vi.waitFor(() => expect(finished).toHaveLength(2));
    actor.stop();
    const runs = otel.named('invoke_agent agent');
    expect(runs.map((s) => s.attributes['agent_machine.execution.id'])).toEqual(finished);
  });

  it('traces an actor created before @opentelemetry/api has loaded (events wait for it)', async () => {
    vi.resetModules();
    const fresh = await import('../../src/index');
    const agent = fresh.createAgent({
      driver: fresh.scriptedDriver([{ text: 'early' }]),
      telemetry: { tracer: otel.tracer },
    });
    const actor = agent.createActor(fresh.AgentState.empty().withUserMessage('now'));
    const done = new Promise<void>((resolve) => actor.on('execution.finished', () => resolve()));
    actor.start();
    actor.send({ type: 'execute' });
    await done;
    await vi.waitFor(() => expect(otel.named('invoke_agent agent')).toHaveLength(1));
    const [run] = otel.named('invoke_agent agent');
    const [chat] = otel.named('chat');
    expect(chat && run && parentOf(chat)).toBe(run && idOf(run));
  });

  it('ends the run span when the run rests awaiting approval, and traces the decided run anew', async () => {
    const guarded = { ...add, needsApproval: true };
    const agent = createAgent({
      driver: scriptedDriver([
        { toolCalls: [{ id: 'c1', name: 'add', args: { a: 1, b: 2 } }] },
        { text: '3' },
      ]),
      tools: { add: guarded },
      telemetry: { tracer: otel.tracer },
    });
    const waiting = await agent.execute(ask());
    expect(
      otel.named('invoke_agent agent').map((s) => s.attributes['agent_machine.awaiting_approval']),
    ).toEqual([true]);
    const done = await agent.decide(waiting, [{ toolCallId: 'c1', type: 'approve' }]);
    expect(done.status()).toBe(ExecutionStatus.Completed);
    const runs = otel.named('invoke_agent agent');
    expect(runs).toHaveLength(2);
    const [tool] = otel.named('execute_tool add');
    expect(tool && parentOf(tool)).toBe(runs[1] && idOf(runs[1]));
  });

  it('refuses a telemetry option without a tracer', () => {
    const options = { tracer: {} } as unknown as TelemetryOptions;
    expect(() => createAgent({ driver: scriptedDriver([{ text: 'x' }]), telemetry: options })).toThrowError(
      InvalidDefinitionError,
    );
    // any @opentelemetry/api Tracer fits the option's type
    const typed: TelemetryOptions = { tracer: trace.getTracer('x') };
    expect(typed.tracer).toBeDefined();
  });
});
