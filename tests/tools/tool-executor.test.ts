import type { JSONSchema7, LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { jsonSchema, tool, zodSchema } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type ScriptStep, scriptedDriver } from '../../src/drivers/scripted-driver';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { AgentStepType } from '../../src/state/agent-step-type';
import { ExecutionStatus } from '../../src/state/execution-status';
import { StopReason } from '../../src/state/stop-reason';
import { defineTool, type ToolExecuteOptions, type ToolSet } from '../../src/tools/define-tool';
import { ToolTimeoutError } from '../../src/tools/tool-timeout-error';
import { add } from '../support/agents';

const question = () => AgentState.empty().withUserMessage('Go');

/** Runs one step with the given tool calls, then a final answer, and returns the final state. */
function runCalls(
  tools: ToolSet,
  toolCalls: ScriptStep['toolCalls'],
  options: { toolConcurrency?: number; toolTimeoutMs?: number; signal?: AbortSignal } = {},
) {
  const { signal, ...definition } = options;
  const agent = createAgent({
    driver: scriptedDriver([{ toolCalls }, { text: 'done' }]),
    tools,
    ...definition,
  });
  return agent.execute(question(), { signal });
}

/** A promise with its resolve function. */
function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Settles only when `signal` aborts, rejecting with its reason (a tool that honours its signal). */
const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => {
    if (signal.aborted) reject(signal.reason);
    signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });

const ticks = async (n: number) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe('the tool executor', () => {
  it('runs the calls of a step in parallel and keeps the model order in the results', async () => {
    const finished: string[] = [];
    const fastDone = deferred();
    const slow = defineTool({
      inputSchema: z.object({}),
      execute: async (_input, { toolCallId }) => {
        // Finishes only after both fast calls did: it can only do so if they ran alongside it.
        await fastDone.promise;
        finished.push(toolCallId);
        return 'slow';
      },
    });
    const fast = defineTool({
      inputSchema: z.object({ n: z.number() }),
      execute: async ({ n }, { toolCallId }) => {
        finished.push(toolCallId);
        if (finished.length === 2) fastDone.resolve();
        return n;
      },
    });
    const state = await runCalls({ slow, fast }, [
      { id: 's1', name: 'slow', args: {} },
      { id: 'f1', name: 'fast', args: { n: 1 } },
      { id: 'f2', name: 'fast', args: { n: 2 } },
    ]);

    expect(finished).toEqual(['f1', 'f2', 's1']);
    const executions = state.steps()[0]?.toolExecutions() ?? [];
    expect(executions.map((e) => [e.toolCallId(), e.value()])).toEqual([
      ['s1', 'slow'],
      ['f1', 1],
      ['f2', 2],
    ]);
    expect(
      state
        .messages()
        .filter((m) => m.role === 'tool')
        .map((m) => m.toolCallId),
    ).toEqual(['s1', 'f1', 'f2']);
  });

  it.each([1, 2, 3])('runs at most toolConcurrency (%i) calls at a time', async (limit) => {
    let active = 0;
    let peak = 0;
    let runs = 0;
    const probe = defineTool({
      inputSchema: z.object({}),
      execute: async () => {
        active++;
        runs++;
        peak = Math.max(peak, active);
        await ticks(3);
        active--;
        return runs;
      },
    });
    const calls = Array.from({ length: 6 }, (_, i) => ({ id: `p${i}`, name: 'probe', args: {} }));
    const state = await runCalls({ probe }, calls, { toolConcurrency: limit });

    expect(peak).toBe(limit);
    expect(runs).toBe(6);
    expect(
      state
        .steps()[0]
        ?.toolExecutions()
        .map((e) => e.toolCallId()),
    ).toEqual(calls.map((c) => c.id));
  });

  it('fails a call that outlives its timeout with ToolTimeoutError; the other calls are unaffected', async () => {
    let abortReason: unknown;
    const sleepy = defineTool({
      inputSchema: z.object({}),
      timeoutMs: 20,
      execute: async (_input, { signal }) => {
        signal.addEventListener('abort', () => {
          abortReason = signal.reason;
        });
        return untilAborted(signal);
      },
    });
    const state = await runCalls({ sleepy, add }, [
      { id: 'z1', name: 'sleepy', args: {} },
      { id: 'a1', name: 'add', args: { a: 2, b: 3 } },
    ]);

    expect(state.status()).toBe(ExecutionStatus.Completed);
    const [timedOut, added] = state.steps()[0]?.toolExecutions() ?? [];
    expect(timedOut?.error()).toEqual({
      name: 'ToolTimeoutError',
      message: "Tool 'sleepy' timed out after 20 ms",
      code: 'TOOL_TIMEOUT',
      details: null,
    });
    expect(abortReason).toBeInstanceOf(ToolTimeoutError);
    expect(added?.hasError()).toBe(false);
    expect(added?.value()).toBe(5);
    expect(state.steps()[0]?.stepType()).toBe(AgentStepType.Error);
  });

  it("applies the agent's toolTimeoutMs to tools without their own", async () => {
    const sleepy = defineTool({
      inputSchema: z.object({}),
      execute: (_i, { signal }) => untilAborted(signal),
    });
    const state = await runCalls({ sleepy }, [{ id: 'z1', name: 'sleepy', args: {} }], { toolTimeoutMs: 30 });
    expect(state.steps()[0]?.toolExecutions()[0]?.error()?.message).toBe(
      "Tool 'sleepy' timed out after 30 ms",
    );
  });

  it('refuses invalid arguments listing every zod issue; the tool body never runs', async () => {
    let ran = 0;
    const counted = defineTool({
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => {
        ran++;
        return a + b;
      },
    });
    const state = await runCalls({ add: counted }, [{ id: 'c1', name: 'add', args: { a: 'two' } }]);

    expect(ran).toBe(0);
    const issues = [
      'a: Invalid input: expected number, received string',
      'b: Invalid input: expected number, received undefined',
    ];
    expect(state.steps()[0]?.toolExecutions()[0]?.error()).toEqual({
      name: 'ToolArgumentsInvalid',
      message: `Invalid arguments for tool 'add': ${issues.join('; ')}`,
      code: 'INVALID_TOOL_ARGUMENTS',
      details: { issues },
    });
    // The model is told, as the tool's result.
    expect(state.messages().find((m) => m.role === 'tool')).toMatchObject({
      isError: true,
      content: `Error: Invalid arguments for tool 'add': ${issues.join('; ')}`,
    });
  });

  it('says so when the arguments are text that is not valid JSON', async () => {
    const state = await runCalls({ add }, [{ id: 'c1', name: 'add', args: '{"a": 2, "b": 3' }]);
    const error = state.steps()[0]?.toolExecutions()[0]?.error();
    expect(error?.name).toBe('ToolArgumentsInvalid');
    expect(error?.message).toMatch(/^Invalid arguments for tool 'add': the arguments are not valid JSON \(/);
    expect(error?.message).toContain('Received: {"a": 2, "b": 3');
    expect(error?.details).toMatchObject({ invalidJson: true, rawArguments: '{"a": 2, "b": 3' });
  });

  it('fails a call to an unknown tool, naming the tools that exist', async () => {
    const state = await runCalls({ add }, [{ id: 'c1', name: 'multiply', args: { a: 2, b: 3 } }]);
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.steps()[0]?.toolExecutions()[0]?.error()).toEqual({
      name: 'UnknownTool',
      message: "Tool 'multiply' does not exist. Available tools: add",
      code: 'UNKNOWN_TOOL',
      details: null,
    });
  });

  it('gives execute { signal, toolCallId, state }, and a stop reaches the signal', async () => {
    const started = deferred<ToolExecuteOptions>();
    let sawAbort = false;
    const waiter = defineTool({
      inputSchema: z.object({}),
      execute: async (_input, options) => {
        started.resolve(options);
        options.signal.addEventListener('abort', () => {
          sawAbort = true;
        });
        return untilAborted(options.signal);
      },
    });
    const controller = new AbortController();
    const run = runCalls({ waiter }, [{ id: 'w1', name: 'waiter', args: {} }], { signal: controller.signal });
    const options = await started.promise;
    controller.abort();
    const state = await run;

    expect(options.toolCallId).toBe('w1');
    expect(options.state).toBeInstanceOf(AgentState);
    expect(options.state.executionId()).toBe(state.executionId());
    expect(options.abortSignal).toBe(options.signal);
    expect(options.context).toEqual({});
    expect(options.messages.map((m) => m.content)).toContain('Go');
    expect(sawAbort).toBe(true);
    expect(options.signal.aborted).toBe(true);
    expect(state.status()).toBe(ExecutionStatus.Stopped);
    expect(state.stopReason()).toBe(StopReason.UserRequested);
    expect(
      state
        .steps()[0]
        ?.toolExecutions()
        .map((e) => [e.toolCallId(), e.error()?.name]),
    ).toEqual([['w1', 'AbortError']]);
  });
});

const usage: LanguageModelV4GenerateResult['usage'] = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
};
const callThenAnswer = (args: unknown) =>
  new MockLanguageModelV4({
    doGenerate: [
      {
        content: [{ type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: JSON.stringify(args) }],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage,
        warnings: [],
      },
      {
        content: [{ type: 'text', text: 'done' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage,
        warnings: [],
      },
    ],
  });

describe('AI SDK tool() objects', () => {
  it('work unchanged with a zod schema: the model sees its JSON Schema, execute gets AI SDK options', async () => {
    let seen: { toolCallId: string; abortSignal: AbortSignal | undefined } | undefined;
    const aiAdd = tool({
      description: 'Add two numbers',
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: async ({ a, b }, { toolCallId, abortSignal }) => {
        seen = { toolCallId, abortSignal };
        return a + b;
      },
    });
    const model = callThenAnswer({ a: 2, b: 3 });
    const state = await createAgent({ model, tools: { add: aiAdd } }).execute(question());

    expect(state.steps()[0]?.toolExecutions()[0]?.value()).toBe(5);
    expect(seen?.toolCallId).toBe('c1');
    expect(seen?.abortSignal).toBeInstanceOf(AbortSignal);
    expect(model.doGenerateCalls[0]?.tools).toEqual([
      {
        type: 'function',
        name: 'add',
        description: 'Add two numbers',
        inputSchema: expect.objectContaining({
          type: 'object',
          properties: { a: { type: 'number' }, b: { type: 'number' } },
          required: ['a', 'b'],
        }),
      },
    ]);
  });

  it('with a zod schema still refuses invalid arguments, listing the issues', async () => {
    let ran = 0;
    const aiAdd = tool({
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: async ({ a, b }) => {
        ran++;
        return a + b;
      },
    });
    const state = await createAgent({ model: callThenAnswer({ a: 2 }), tools: { add: aiAdd } }).execute(
      question(),
    );
    expect(ran).toBe(0);
    expect(state.steps()[0]?.toolExecutions()[0]?.error()?.message).toBe(
      "Invalid arguments for tool 'add': b: Invalid input: expected number, received undefined",
    );
  });

  it('work unchanged with jsonSchema(): the schema goes to the model as given, the input to execute', async () => {
    const schema: JSONSchema7 = {
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
      additionalProperties: false,
    };
    let input: unknown;
    const aiAdd = tool({
      description: () => 'Add two numbers (described lazily)',
      inputSchema: jsonSchema<{ a: number; b: number }>(schema),
      execute: async (args) => {
        input = args;
        return args.a + args.b;
      },
    });
    const model = callThenAnswer({ a: 2, b: 3 });
    const state = await createAgent({ model, tools: { add: aiAdd } }).execute(question());

    expect(state.steps()[0]?.toolExecutions()[0]?.value()).toBe(5);
    expect(input).toEqual({ a: 2, b: 3 });
    expect(model.doGenerateCalls[0]?.tools).toEqual([
      {
        type: 'function',
        name: 'add',
        description: 'Add two numbers (described lazily)',
        inputSchema: schema,
      },
    ]);
  });

  it("use jsonSchema()'s validate option and zodSchema()'s issues when arguments are invalid", async () => {
    const withValidate = tool({
      inputSchema: jsonSchema<{ a: number }>(
        { type: 'object', properties: { a: { type: 'number' } } },
        {
          validate: (value) =>
            typeof (value as { a?: unknown }).a === 'number'
              ? { success: true, value: value as { a: number } }
              : { success: false, error: new Error('a must be a number') },
        },
      ),
      execute: async ({ a }) => a,
    });
    const wrappedZod = tool({
      inputSchema: zodSchema(z.object({ a: z.number() })),
      execute: async ({ a }) => a,
    });
    const state = await runCalls({ withValidate, wrappedZod }, [
      { id: 'v1', name: 'withValidate', args: { a: 'x' } },
      { id: 'z1', name: 'wrappedZod', args: { a: 'x' } },
    ]);
    expect(
      state
        .steps()[0]
        ?.toolExecutions()
        .map((e) => e.error()?.message),
    ).toEqual([
      "Invalid arguments for tool 'withValidate': a must be a number",
      "Invalid arguments for tool 'wrappedZod': a: Invalid input: expected number, received string",
    ]);
  });
});
