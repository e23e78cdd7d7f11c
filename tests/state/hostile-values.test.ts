import type { LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { FileSessionStore } from '../../src/persistence/file-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { AgentStepType } from '../../src/state/agent-step-type';
import { InvalidStateError } from '../../src/state/errors';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { ExecutionStatus } from '../../src/state/execution-status';
import {
  MAX_VALUE_DEPTH,
  toJsonValue,
  UnsavableValueError,
  ValueTooDeepError,
} from '../../src/state/json-value';
import { defineTool, type ToolSet } from '../../src/tools/define-tool';
import { tempDir } from '../persistence/fixtures';

const question = () => AgentState.empty().withUserMessage('Go');
const roundTrip = (state: AgentState) => AgentState.fromJSON(JSON.parse(JSON.stringify(state)));
const nested = (levels: number) => JSON.parse(`${'['.repeat(levels)}${']'.repeat(levels)}`);
const hostileJson = '{"__proto__":{"admin":true},"ok":1}';
const ownProto = (value: unknown) => Object.getOwnPropertyDescriptor(value, '__proto__')?.value;

const usage = (input: number, output: number): LanguageModelV4GenerateResult['usage'] => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});
const calls = (
  ...list: Array<{ id: string; name: string; input: string }>
): LanguageModelV4GenerateResult => ({
  content: list.map((c) => ({ type: 'tool-call', toolCallId: c.id, toolName: c.name, input: c.input })),
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage: usage(10, 5),
  warnings: [],
});
const text = (value: string, reported = usage(20, 2)): LanguageModelV4GenerateResult => ({
  content: [{ type: 'text', text: value }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage: reported,
  warnings: [],
});

const echo = defineTool({
  description: 'Returns what it got',
  inputSchema: z.object({}).passthrough(),
  execute: async (input) => input,
});

let cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const cleanup of cleanups) await cleanup();
  cleanups = [];
});
async function fileStore(): Promise<FileSessionStore> {
  const { dir, remove } = await tempDir();
  const store = new FileSessionStore(dir);
  cleanups.push(async () => {
    await store.close();
    await remove();
  });
  return store;
}

describe('values that enter the state at run time', () => {
  describe('an own __proto__ key is kept as data', () => {
    it('in a tool result and in tool-call arguments, through a file store, touching no prototype', async () => {
      const store = await fileStore();
      const model = new MockLanguageModelV4({
        doGenerate: [calls({ id: 'c1', name: 'fetch', input: hostileJson }), text('done')],
      });
      const fetchTool = defineTool({
        description: 'Returns third-party JSON',
        inputSchema: z.object({ ok: z.number() }),
        execute: async () => JSON.parse(hostileJson),
      });
      const agent = createAgent({ model, tools: { fetch: fetchTool }, store });
      const done = await agent.execute(question(), { sessionId: 'proto' });
      expect(done.status()).toBe(ExecutionStatus.Completed);

      const loaded = (await store.load('proto'))?.state as AgentState;
      const execution = loaded.steps()[0]?.toolExecutions()[0];
      expect(ownProto(execution?.value())).toEqual({ admin: true });
      expect(ownProto(execution?.args())).toEqual({ admin: true });
      expect(Object.getPrototypeOf(execution?.value())).toBe(Object.prototype);
      expect(loaded.toJSON()).toEqual(done.toJSON());
      expect(({} as Record<string, unknown>).admin).toBeUndefined();
    });

    it('in an approval’s edited input, decided after a load', async () => {
      const store = await fileStore();
      const gated = defineTool({
        description: 'Needs a person',
        inputSchema: z.object({}).passthrough(),
        needsApproval: true,
        execute: async (input) => input,
      });
      const agent = createAgent({
        driver: scriptedDriver([{ toolCalls: [{ id: 'g1', name: 'gated', args: {} }] }, { text: 'done' }]),
        tools: { gated },
        store,
      });
      const waiting = await agent.execute(question(), { sessionId: 'edit' });
      expect(waiting.pendingApprovals().map((p) => p.toolCallId)).toEqual(['g1']);
      const done = await agent.decide('edit', [
        { toolCallId: 'g1', type: 'edit', args: JSON.parse(hostileJson) },
      ]);
      expect(done.status()).toBe(ExecutionStatus.Completed);
      const loaded = (await store.load('edit'))?.state as AgentState;
      expect(ownProto(loaded.steps()[0]?.toolExecutions()[0]?.args())).toEqual({ admin: true });
    });
  });

  describe('deeply nested values are refused where they enter, naming the limit', () => {
    it('a tool result 10,000 levels deep fails its call; the run goes on and its checkpoint loads', async () => {
      const store = await fileStore();
      const deep = defineTool({
        description: 'Too deep',
        inputSchema: z.object({}),
        execute: async () => nested(10_000),
      });
      const agent = createAgent({
        driver: scriptedDriver([{ toolCalls: [{ id: 'd1', name: 'deep', args: {} }] }, { text: 'done' }]),
        tools: { deep },
        store,
      });
      const done = await agent.execute(question(), { sessionId: 'deep' });
      expect(done.status()).toBe(ExecutionStatus.Completed);
      const error = done.steps()[0]?.toolExecutions()[0]?.error();
      expect(error?.code).toBe('VALUE_TOO_DEEP');
      expect(error?.message).toContain(`${MAX_VALUE_DEPTH} levels`);
      expect((await store.load('deep'))?.state.toJSON()).toEqual(done.toJSON());
    });

    it('a value at the limit is kept and loads', async () => {
      const kept = defineTool({
        description: 'Deep',
        inputSchema: z.object({}),
        execute: async () => nested(MAX_VALUE_DEPTH),
      });
      const agent = createAgent({
        driver: scriptedDriver([{ toolCalls: [{ id: 'k1', name: 'kept', args: {} }] }, { text: 'done' }]),
        tools: { kept },
      });
      const done = await agent.execute(question());
      expect(done.steps()[0]?.toolExecutions()[0]?.hasError()).toBe(false);
      expect(roundTrip(done).toJSON()).toEqual(done.toJSON());
    });

    it('model arguments 5,000 levels deep: an error step and a failed call, and the state loads', async () => {
      const model = new MockLanguageModelV4({
        doGenerate: [
          calls({ id: 'a1', name: 'echo', input: `{"x":${'['.repeat(5000)}${']'.repeat(5000)}}` }),
          text('ok'),
        ],
      });
      const ran: unknown[] = [];
      const tools: ToolSet = {
        echo: defineTool({
          description: 'Echo',
          inputSchema: z.object({}).passthrough(),
          execute: async (i) => ran.push(i),
        }),
      };
      const done = await createAgent({ model, tools }).execute(question());
      const step = done.steps()[0];
      expect(step?.stepType()).toBe(AgentStepType.Error);
      expect(step?.toolExecutions()[0]?.error()?.code).toBe('VALUE_TOO_DEEP');
      expect(ran).toEqual([]);
      expect(roundTrip(done).toJSON()).toEqual(done.toJSON());
    });

    it('structured output too deep is a step error the model is told about', async () => {
      const agent = createAgent({
        driver: scriptedDriver([{ text: JSON.stringify({ a: nested(3000) }) }, { text: '{"a":1}' }]),
        responseFormat: z.object({ a: z.unknown() }),
      });
      const done = await agent.execute(question());
      expect(done.steps()[0]?.errors()[0]?.code).toBe('INVALID_STRUCTURED_OUTPUT');
      expect(done.steps()[0]?.errors()[0]?.message).toContain(`${MAX_VALUE_DEPTH} levels`);
      expect(done.structuredOutput()).toEqual({ a: 1 });
      expect(roundTrip(done).toJSON()).toEqual(done.toJSON());
    });

    it('fromJSON answers deep and cyclic input with InvalidStateError, never a RangeError', () => {
      const deepText = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
      expect(() => AgentState.fromJSON(deepText)).toThrow(InvalidStateError);
      expect(() => AgentState.fromJSON(JSON.parse(deepText))).toThrow(InvalidStateError);
      const cyclic = JSON.parse(JSON.stringify(question()));
      cyclic.context.metadata.self = cyclic.context.metadata;
      expect(() => AgentState.fromJSON(cyclic)).toThrow(/cycle/);
      const deepValue = JSON.parse(JSON.stringify(question()));
      deepValue.context.metadata.deep = nested(MAX_VALUE_DEPTH + 1);
      expect(() => AgentState.fromJSON(deepValue)).toThrow(/context\.metadata\.deep/);
    });

    it('toJsonValue names the limit, refuses cycles, and keeps JSON.stringify’s meaning', () => {
      expect(() => toJsonValue(nested(MAX_VALUE_DEPTH + 1))).toThrow(ValueTooDeepError);
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      expect(() => toJsonValue(cyclic)).toThrow(UnsavableValueError);
      expect(() => toJsonValue({ n: 1n })).toThrow(/BigInt/);
      const shared = { x: 1 };
      expect(
        toJsonValue({ a: shared, b: shared, n: Number.NaN, z: -0, u: undefined, f: () => 1, d: new Date(0) }),
      ).toEqual({ a: { x: 1 }, b: { x: 1 }, n: null, z: 0, d: '1970-01-01T00:00:00.000Z' });
      expect(toJsonValue([undefined, Number.POSITIVE_INFINITY])).toEqual([null, null]);
    });
  });

  describe('whatever a tool throws is recorded in a loadable form', () => {
    const oddError = Object.assign(new Error('odd'), { name: 42, code: 500 });
    const unreadable = Object.defineProperty(new Error('x'), 'message', {
      get() {
        throw new Error('no message for you');
      },
    });
    const throwingGetter = {
      get name(): string {
        throw new Error('boom');
      },
      code: 7,
      details: { deep: nested(1000) },
    };
    const proxy = new Proxy(
      {},
      {
        get() {
          throw new Error('trap');
        },
        getPrototypeOf() {
          throw new Error('trap');
        },
      },
    );
    const cases: Array<[string, unknown]> = [
      ['a number', 42],
      ['null', null],
      ['undefined', undefined],
      ['a symbol', Symbol('s')],
      ['an object with a numeric code', { code: 404, message: 'gone', extra: { f: () => 1 } }],
      ['an error whose name is a number', oddError],
      ['an error whose message getter throws', unreadable],
      ['a record with a throwing getter and deep details', throwingGetter],
      ['a proxy whose traps throw', proxy],
      ['a BigInt', 10n],
    ];
    it.each(cases)('%s', async (_label, thrown) => {
      const bad = defineTool({
        description: 'Throws',
        inputSchema: z.object({}),
        execute: async () => {
          throw thrown;
        },
      });
      const agent = createAgent({
        driver: scriptedDriver([{ toolCalls: [{ id: 't1', name: 'bad', args: {} }] }, { text: 'done' }]),
        tools: { bad },
      });
      const done = await agent.execute(question());
      const error = done.steps()[0]?.toolExecutions()[0]?.error();
      expect(typeof error?.name).toBe('string');
      expect(typeof error?.message).toBe('string');
      expect(error?.code === null || typeof error?.code === 'string').toBe(true);
      expect(roundTrip(done).toJSON()).toEqual(done.toJSON());
    });
  });

  describe('model-reported usage is checked', () => {
    it.each([
      ['negative', -1_000_000],
      ['NaN', Number.NaN],
      ['infinite', Number.POSITIVE_INFINITY],
    ])(
      '%s token counts fail the run with INVALID_USAGE, and the state saves and loads',
      async (_label, tokens) => {
        const store = await fileStore();
        const model = new MockLanguageModelV4({ doGenerate: [text('hi', usage(tokens, 1))] });
        const agent = createAgent({ model, store, budget: new ExecutionBudget({ maxTokens: 100 }) });
        const done = await agent.execute(question(), { sessionId: 'usage' });
        expect(done.status()).toBe(ExecutionStatus.Failed);
        expect(done.errors().map((e) => e.code)).toContain('INVALID_USAGE');
        expect((await store.load('usage'))?.state.toJSON()).toEqual(done.toJSON());
      },
    );

    it('a negative count cannot buy room under maxTokens', async () => {
      const model = new MockLanguageModelV4({
        doGenerate: [
          { ...calls({ id: 'c1', name: 'echo', input: '{}' }), usage: usage(-1_000_000, 0) },
          calls({ id: 'c2', name: 'echo', input: '{}' }),
          text('done'),
        ],
      });
      const done = await createAgent({
        model,
        tools: { echo },
        budget: new ExecutionBudget({ maxTokens: 20 }),
      }).execute(question());
      expect(done.status()).toBe(ExecutionStatus.Failed);
      expect(done.usage().totalTokens).toBeGreaterThanOrEqual(0);
      expect(model.doGenerateCalls).toHaveLength(1);
    });
  });

  describe('tool-call ids', () => {
    it('an empty or repeated id gets an id of its own; results answer each call', async () => {
      const model = new MockLanguageModelV4({
        doGenerate: [
          calls(
            { id: '', name: 'echo', input: '{"n":1}' },
            { id: 'same', name: 'echo', input: '{"n":2}' },
            { id: 'same', name: 'echo', input: '{"n":3}' },
            { id: '__proto__', name: 'echo', input: '{"n":4}' },
          ),
          text('done'),
        ],
      });
      const done = await createAgent({ model, tools: { echo } }).execute(question());
      const executions = done.steps()[0]?.toolExecutions() ?? [];
      const ids = executions.map((e) => e.toolCallId());
      expect(new Set(ids).size).toBe(4);
      expect(ids).not.toContain('');
      expect(ids).not.toContain('__proto__');
      expect(executions.map((e) => e.value())).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
      const assistant = done.steps()[0]?.outputMessages()[0];
      expect(assistant?.toolCalls?.map((c) => c.id)).toEqual(ids);
      expect(roundTrip(done).toJSON()).toEqual(done.toJSON());
    });

    it('approvals of such calls load and can be decided', async () => {
      const store = await fileStore();
      const gated = defineTool({
        description: 'Needs a person',
        inputSchema: z.object({}).passthrough(),
        needsApproval: true,
        execute: async (input) => input,
      });
      const agent = createAgent({
        driver: scriptedDriver([
          {
            toolCalls: [
              { id: '', name: 'gated', args: { n: 1 } },
              { id: '', name: 'gated', args: { n: 2 } },
            ],
          },
          { text: 'done' },
        ]),
        tools: { gated },
        store,
      });
      await agent.execute(question(), { sessionId: 'ids' });
      const loaded = (await store.load('ids'))?.state as AgentState;
      const pending = loaded.pendingApprovals().map((p) => p.toolCallId);
      expect(pending).toHaveLength(2);
      expect(new Set(pending).size).toBe(2);
      const done = await agent.decide(
        'ids',
        pending.map((toolCallId) => ({ toolCallId, type: 'approve' as const })),
      );
      expect(done.status()).toBe(ExecutionStatus.Completed);
      expect(
        done
          .steps()[0]
          ?.toolExecutions()
          .map((e) => e.value()),
      ).toEqual([{ n: 1 }, { n: 2 }]);
    });
  });

  it('valid JSON of the wrong type is reported as the wrong type, not as invalid JSON', async () => {
    const model = new MockLanguageModelV4({
      doGenerate: [
        calls(
          { id: 's', name: 'echo', input: '"hello"' },
          { id: 'a', name: 'echo', input: '[1,2]' },
          { id: 'b', name: 'echo', input: '{"broken"' },
        ),
        text('done'),
      ],
    });
    const done = await createAgent({ model, tools: { echo } }).execute(question());
    const messages = done
      .steps()[0]
      ?.toolExecutions()
      .map((e) => e.error()?.message);
    expect(messages?.[0]).toMatch(/expected object, received string/);
    expect(messages?.[0]).not.toMatch(/not valid JSON/);
    expect(messages?.[1]).toMatch(/expected object, received array/);
    expect(messages?.[2]).toMatch(/not valid JSON/);
  });
});
