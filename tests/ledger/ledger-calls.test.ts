import { APICallError } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { reactDriver } from '../../src/drivers/react-driver';
import { InMemoryBudgetLedger } from '../../src/ledger/in-memory-budget-ledger';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import type { SubagentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { InvalidArgumentError } from '../../src/state/errors';
import { ExecutionStatus } from '../../src/state/execution-status';
import type { AgentEvent } from '../../src/state/loop-events';
import { StopReason } from '../../src/state/stop-reason';
import { defineTool } from '../../src/tools/define-tool';
import { add } from '../support/agents';
import { memoryTracer } from '../support/otel';
import { stoppedByLedger } from './support/cap-scenario';
import { CALL_COST, INPUT_TOKENS, MAX_OUTPUT, OUTPUT_TOKENS, PRICE, scripted } from './support/ledger-models';

const hi = () => AgentState.empty().withUserMessage('hi');
const priced = (...ids: string[]) => ({
  pricing: Object.fromEntries(ids.map((id) => [id, PRICE])),
  callOptions: { maxOutputTokens: MAX_OUTPUT },
});
const CALL_TOKENS = INPUT_TOKENS + OUTPUT_TOKENS;

describe('a run charging the budget ledger', () => {
  it('starts no model call a scope cannot cover: the run stops with token_limit_reached naming the scope', async () => {
    const ledger = new InMemoryBudgetLedger();
    await ledger.setLimit('user:1', { maxCost: 1e-9 });
    const model = scripted('m', [{ text: 'never' }]);
    const agent = createAgent({ model, ledger, modelOptions: priced('m') });
    const state = await agent.execute(hi(), { ledgerScopes: ['tenant:acme', 'user:1'] });

    expect(model.calls).toBe(0);
    expect(state.status()).toBe(ExecutionStatus.Stopped);
    expect(state.stopReason()).toBe(StopReason.TokenLimitReached);
    expect(stoppedByLedger(state, 'user:1')).toBe(true);
    expect(state.stopSignal()?.context).toMatchObject({ limit: 'ledger', spent: 0, reserved: 0, max: 1e-9 });
    expect(state.stopSignal()?.source).toBe('budgetLedger');
    // nothing was held on the scope that could have covered it
    expect(await ledger.usage('tenant:acme')).toEqual({
      cost: 0,
      tokens: 0,
      reservedCost: 0,
      reservedTokens: 0,
    });
  });

  it('charges the scopes decide names for the calls of the run it continues', async () => {
    const ledger = new InMemoryBudgetLedger();
    const store = new InMemorySessionStore();
    const asked = defineTool({
      description: 'Add, asked first',
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      needsApproval: true,
      execute: async ({ a, b }) => a + b,
    });
    const model = scripted('m', [{ tool: 'add', input: { a: 1, b: 2 } }, { text: '3' }, { text: 'again' }]);
    const agent = createAgent({ model, ledger, store, tools: { add: asked }, modelOptions: priced('m') });
    const waiting = await agent.execute(hi(), { sessionId: 's', ledgerScopes: ['tenant:acme'] });
    expect(waiting.pendingApprovals()).toHaveLength(1);
    expect((await ledger.usage('tenant:acme')).cost).toBeCloseTo(CALL_COST);
    // the step after the approval is charged to the scopes decide names
    const [pending] = waiting.pendingApprovals();
    const decided = await agent.decide(
      's',
      [{ toolCallId: pending?.toolCallId as string, type: 'approve' }],
      {
        ledgerScopes: ['user:7'],
      },
    );
    expect(decided.status()).toBe(ExecutionStatus.Completed);
    expect((await ledger.usage('user:7')).cost).toBeCloseTo(CALL_COST);
    expect((await ledger.usage('tenant:acme')).cost).toBeCloseTo(CALL_COST);
    // a later run of the session's state under a capped scope is refused before its call
    await ledger.setLimit('user:8', { maxCost: 1e-9 });
    const next = await agent.execute(decided.forNextExecution().withUserMessage('more'), {
      sessionId: 's2',
      ledgerScopes: ['user:8'],
    });
    expect(stoppedByLedger(next, 'user:8')).toBe(true);
    expect((await ledger.usage('user:8')).reservedCost).toBe(0);
  });

  it('settles each call to its real usage priced with modelOptions.pricing, and reports both ends', async () => {
    const ledger = new InMemoryBudgetLedger();
    const model = scripted('m', [{ tool: 'add', input: { a: 1, b: 2 } }, { text: '3' }]);
    const agent = createAgent({ model, ledger, tools: { add }, modelOptions: priced('m') });
    const events: AgentEvent[] = [];
    const state = await agent.execute(hi(), {
      ledgerScopes: ['tenant:acme'],
      onEvent: (event) => events.push(event),
    });
    expect(state.status()).toBe(ExecutionStatus.Completed);
    const usage = await ledger.usage('tenant:acme');
    expect(usage).toEqual({
      cost: 2 * CALL_COST,
      tokens: 2 * CALL_TOKENS,
      reservedCost: 0,
      reservedTokens: 0,
    });
    const ledgerEvents = events.filter((e) => e.type.startsWith('ledger.'));
    expect(ledgerEvents.map((e) => e.type)).toEqual([
      'ledger.reserved',
      'ledger.settled',
      'ledger.reserved',
      'ledger.settled',
    ]);
    const [reserved, settled] = ledgerEvents as [
      AgentEvent & Record<string, unknown>,
      AgentEvent & Record<string, unknown>,
    ];
    expect(reserved).toMatchObject({ stepNumber: 1, scopes: ['tenant:acme'] });
    // the worst case: at least the real use, with the whole output allowance
    expect(reserved.tokens as number).toBeGreaterThan(INPUT_TOKENS + MAX_OUTPUT);
    expect(reserved.cost as number).toBeGreaterThan(CALL_COST);
    expect(settled).toMatchObject({
      key: reserved.key,
      cost: CALL_COST,
      tokens: CALL_TOKENS,
      released: false,
    });
  });

  it('releases the reservation of a call that failed: nothing charged, nothing held', async () => {
    const ledger = new InMemoryBudgetLedger();
    const model = new MockLanguageModelV4({
      modelId: 'm',
      doGenerate: async () => {
        throw new APICallError({
          message: 'bad request',
          url: 'http://127.0.0.1/x',
          requestBodyValues: {},
          statusCode: 400,
        });
      },
    });
    const agent = createAgent({ model, ledger, modelOptions: priced('m') });
    const events: AgentEvent[] = [];
    const state = await agent.execute(hi(), { ledgerScopes: ['t'], onEvent: (e) => events.push(e) });
    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(await ledger.usage('t')).toEqual({ cost: 0, tokens: 0, reservedCost: 0, reservedTokens: 0 });
    expect(events.find((e) => e.type === 'ledger.settled')).toMatchObject({ released: true, cost: 0 });
  });

  it("keeps the call's error when releasing its reservation fails, and says so in ledger.settled", async () => {
    class Unreachable extends InMemoryBudgetLedger {
      override async release(): Promise<void> {
        throw new Error('ledger unreachable');
      }
    }
    const ledger = new Unreachable();
    const model = new MockLanguageModelV4({
      modelId: 'm',
      doGenerate: async () => {
        throw new APICallError({
          message: 'bad request',
          url: 'http://127.0.0.1/x',
          requestBodyValues: {},
          statusCode: 400,
        });
      },
    });
    const agent = createAgent({ model, ledger, modelOptions: priced('m') });
    const events: AgentEvent[] = [];
    const state = await agent.execute(hi(), { ledgerScopes: ['t'], onEvent: (e) => events.push(e) });
    expect(state.errors()[0]?.message).toContain('bad request');
    expect(events.find((e) => e.type === 'ledger.settled')).toMatchObject({
      released: true,
      leaseError: expect.stringContaining('ledger unreachable'),
    });
  });

  it('charges a step whose model failed over to a fallback model once, under one reservation key', async () => {
    const ledger = new InMemoryBudgetLedger();
    const primary = new MockLanguageModelV4({
      modelId: 'primary',
      doGenerate: async () => {
        throw new APICallError({
          message: 'down',
          url: 'http://127.0.0.1/x',
          requestBodyValues: {},
          statusCode: 503,
        });
      },
    });
    const backup = scripted('backup', [{ text: 'hello' }]);
    const agent = createAgent({
      model: primary,
      fallbackModels: [backup],
      ledger,
      modelOptions: { ...priced('primary', 'backup'), maxRetries: 1, retryDelayMs: 1 },
    });
    const events: AgentEvent[] = [];
    const state = await agent.execute(hi(), { ledgerScopes: ['t'], onEvent: (e) => events.push(e) });
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(primary.doGenerateCalls).toHaveLength(2);
    expect(events.filter((e) => e.type === 'ledger.reserved')).toHaveLength(1);
    expect(events.filter((e) => e.type === 'ledger.settled')).toHaveLength(1);
    expect(await ledger.usage('t')).toEqual({
      cost: CALL_COST,
      tokens: CALL_TOKENS,
      reservedCost: 0,
      reservedTokens: 0,
    });
  });

  it('charges the scopes of the run for the calls of subagents at depth 2', async () => {
    const ledger = new InMemoryBudgetLedger();
    await ledger.setLimit('tenant:acme', { maxCost: 1 });
    const fetcherModel = scripted('fetcher', [{ text: 'page' }]);
    const researcherModel = scripted('researcher', [
      { tool: 'fetcher', input: { task: 'fetch' } },
      { text: 'notes' },
    ]);
    const rootModel = scripted('root', [
      { tool: 'researcher', input: { task: 'research' } },
      { text: 'done' },
    ]);
    const fetcher: SubagentDefinition = {
      description: 'Fetches',
      model: fetcherModel,
      modelOptions: priced('fetcher'),
    };
    const researcher: SubagentDefinition = {
      description: 'Researches',
      model: researcherModel,
      modelOptions: priced('researcher'),
      subagents: { agents: { fetcher } },
    };
    const agent = createAgent({
      model: rootModel,
      ledger,
      modelOptions: priced('root'),
      subagents: { maxDepth: 2, agents: { researcher } },
    });
    const state = await agent.execute(hi(), { ledgerScopes: ['tenant:acme', 'user:1'] });
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect([rootModel.calls, researcherModel.calls, fetcherModel.calls]).toEqual([2, 2, 1]);
    for (const scope of ['tenant:acme', 'user:1']) {
      const usage = await ledger.usage(scope);
      expect(usage.tokens).toBe(5 * CALL_TOKENS);
      expect(usage.cost).toBeCloseTo(5 * CALL_COST, 15);
      expect(usage.reservedCost).toBe(0);
    }
  });

  it("stops a subagent that its caller's scope cannot cover; the caller is told, as of any failed subagent", async () => {
    const ledger = new InMemoryBudgetLedger();
    await ledger.setLimit('t', { maxTokens: 10_000 });
    const fetcherModel = scripted('fetcher', [{ text: 'page' }]);
    const rootModel = scripted('root', [{ tool: 'fetcher', input: { task: 'fetch' } }, { text: 'done' }]);
    // the child may answer at length: its worst case is more than the scope has left
    const fetcher = {
      description: 'Fetches',
      model: fetcherModel,
      modelOptions: { callOptions: { maxOutputTokens: 100_000 } },
    };
    const agent = createAgent({
      model: rootModel,
      ledger,
      modelOptions: priced('root'),
      subagents: { agents: { fetcher } },
    });
    const state = await agent.execute(hi(), { ledgerScopes: ['t'] });
    expect(fetcherModel.calls).toBe(0);
    const call = state.steps()[0]?.toolExecutions()[0];
    expect(stoppedByLedger(call?.childState() as AgentState, 't')).toBe(true);
    expect(call?.error()?.message).toContain("scope 't' cannot cover the next model call");
    expect(await ledger.usage('t')).toMatchObject({ tokens: 2 * CALL_TOKENS, reservedTokens: 0 });
  });
});

describe('the ReAct driver', () => {
  it('reserves, settles and refuses as the model driver does', async () => {
    const ledger = new InMemoryBudgetLedger();
    const model = scripted('m', [{ text: 'Final Answer: 5' }]);
    const agent = createAgent({ driver: reactDriver(model, priced('m')), ledger });
    const done = await agent.execute(hi(), { ledgerScopes: ['t'] });
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(await ledger.usage('t')).toEqual({
      cost: CALL_COST,
      tokens: CALL_TOKENS,
      reservedCost: 0,
      reservedTokens: 0,
    });
    await ledger.setLimit('t', { maxTokens: CALL_TOKENS + 1 });
    const stopped = await agent.execute(hi(), { ledgerScopes: ['t'] });
    expect(model.calls).toBe(1);
    expect(stoppedByLedger(stopped, 't')).toBe(true);
  });
});

describe('what the ledger needs to bound a call', () => {
  it('refuses a cost-capped scope with no price for the model, before any model call, naming the price', async () => {
    const ledger = new InMemoryBudgetLedger();
    await ledger.setLimit('t', { maxCost: 10 });
    const model = scripted('unpriced', [{ text: 'x' }]);
    const agent = createAgent({ model, ledger, modelOptions: { callOptions: { maxOutputTokens: 10 } } });
    const state = await agent.execute(hi(), { ledgerScopes: ['t'] });
    expect(model.calls).toBe(0);
    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.errors()[0]).toMatchObject({ name: 'InvalidArgumentError', code: 'INVALID_ARGUMENT' });
    expect(state.errors()[0]?.message).toContain("modelOptions.pricing['unpriced']");
  });

  it('refuses a capped scope without maxOutputTokens, naming it; an uncapped scope needs neither', async () => {
    const ledger = new InMemoryBudgetLedger();
    await ledger.setLimit('capped', { maxTokens: 1_000 });
    const model = scripted('m', [{ text: 'x' }]);
    const agent = createAgent({ model, ledger });
    const refused = await agent.execute(hi(), { ledgerScopes: ['capped'] });
    expect(model.calls).toBe(0);
    expect(refused.errors()[0]?.message).toContain('modelOptions.callOptions.maxOutputTokens');
    const counted = await agent.execute(hi(), { ledgerScopes: ['uncapped'] });
    expect(counted.status()).toBe(ExecutionStatus.Completed);
    expect((await ledger.usage('uncapped')).tokens).toBe(CALL_TOKENS);
  });

  it('checks limits and scopes: bad values are InvalidArgumentError', async () => {
    const ledger = new InMemoryBudgetLedger();
    await expect(ledger.setLimit('t', { maxCost: -1 })).rejects.toThrow(InvalidArgumentError);
    await expect(ledger.setLimit('t', { maxTokens: 1.5 })).rejects.toThrow(/maxTokens/);
    await expect(ledger.setLimit('t', { period: 'week' as never })).rejects.toThrow(/period/);
    await expect(ledger.setLimit('', { maxCost: 1 })).rejects.toThrow(InvalidArgumentError);
    const agent = createAgent({ model: scripted('m', [{ text: 'x' }]), ledger });
    await expect(agent.execute(hi(), { ledgerScopes: [''] })).rejects.toThrow(/ledgerScopes/);
    const without = createAgent({ model: scripted('m', [{ text: 'x' }]) });
    await expect(without.execute(hi(), { ledgerScopes: ['t'] })).rejects.toThrow(/no budget ledger/);
  });
});

describe('the ledger on the model call span', () => {
  it('sets the reservation and settlement as attributes of the chat span', async () => {
    const otel = memoryTracer();
    const ledger = new InMemoryBudgetLedger();
    const agent = createAgent({
      model: scripted('m', [{ text: 'x' }]),
      ledger,
      modelOptions: priced('m'),
      telemetry: { tracer: otel.tracer },
    });
    await agent.execute(hi(), { ledgerScopes: ['tenant:acme', 'user:1'] });
    const [chat] = otel.spans().filter((span) => span.name.startsWith('chat'));
    expect(chat?.attributes).toMatchObject({
      'agent_machine.ledger.scopes': ['tenant:acme', 'user:1'],
      'agent_machine.ledger.settled_cost': CALL_COST,
      'agent_machine.ledger.settled_tokens': CALL_TOKENS,
    });
    expect(chat?.attributes['agent_machine.ledger.reserved_tokens']).toBeGreaterThan(CALL_TOKENS);
  });

  it('names the scope that refused on the span', async () => {
    const otel = memoryTracer();
    const ledger = new InMemoryBudgetLedger();
    await ledger.setLimit('user:1', { maxTokens: 1 });
    const agent = createAgent({
      model: scripted('m', [{ text: 'x' }]),
      ledger,
      modelOptions: priced('m'),
      telemetry: { tracer: otel.tracer },
    });
    await agent.execute(hi(), { ledgerScopes: ['user:1'] });
    const [chat] = otel.spans().filter((span) => span.name.startsWith('chat'));
    expect(chat?.attributes['agent_machine.ledger.refused_scope']).toBe('user:1');
  });
});
