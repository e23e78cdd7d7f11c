/**
 * A subagent with a `model` of its own and no `modelOptions` prices its calls with its caller's
 * pricing table (#44 item 9g): its cost rolls up to the caller, and the caller's maxCost counts it.
 */
import type { LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { MockLanguageModelV4 } from 'ai/test';
import { describe, expect, it } from 'vitest';
import type { SubagentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { StopReason } from '../../src/state/stop-reason';

const usage = (input: number, output: number): LanguageModelV4GenerateResult['usage'] => ({
  inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});
const text = (value: string): LanguageModelV4GenerateResult => ({
  content: [{ type: 'text', text: value }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage: usage(1_000, 1_000),
  warnings: [],
});
const callChild = (id: string): LanguageModelV4GenerateResult => ({
  content: [
    { type: 'tool-call', toolCallId: id, toolName: 'helper', input: JSON.stringify({ task: 'sum' }) },
  ],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage: usage(0, 0),
  warnings: [],
});

// $1 a million tokens each way for the root's model, $100 for the child's
const pricing = {
  'root-model': { inputPerMillion: 1, outputPerMillion: 1 },
  'child-model': { inputPerMillion: 100, outputPerMillion: 100 },
};
const ask = () => AgentState.empty().withUserMessage('go');

describe("a subagent's model is priced by its caller's pricing table", () => {
  it("a child with a model and no modelOptions: its calls cost what the caller's table says", async () => {
    const helper: SubagentDefinition = {
      description: 'Helps',
      model: new MockLanguageModelV4({ modelId: 'child-model', doGenerate: [text('42')] }),
    };
    const root = createAgent({
      model: new MockLanguageModelV4({ modelId: 'root-model', doGenerate: [callChild('h1'), text('done')] }),
      modelOptions: { pricing },
      subagents: { agents: { helper } },
    });
    const state = await root.execute(ask());
    const child = state.steps()[0]?.toolExecutions()[0]?.childState();
    // 2,000 tokens at $100 a million
    expect(child?.usage().cost).toBeCloseTo(0.2);
    expect(state.steps()[0]?.usage().cost).toBeCloseTo(0.2);
    expect(state.usage().cost).toBeCloseTo(0.2 + 0.002);
  });

  it("the caller's maxCost counts the child's calls", async () => {
    const helper: SubagentDefinition = {
      description: 'Helps',
      model: new MockLanguageModelV4({ modelId: 'child-model', doGenerate: [text('42')] }),
    };
    const root = createAgent({
      model: new MockLanguageModelV4({ modelId: 'root-model', doGenerate: [callChild('h1'), text('done')] }),
      modelOptions: { pricing },
      subagents: { agents: { helper } },
      budget: new ExecutionBudget({ maxCost: 0.1 }),
    });
    const state = await root.execute(ask());
    expect(state.stepCount()).toBe(1);
    expect(state.stopReason()).toBe(StopReason.TokenLimitReached);
  });

  it('a child with a pricing table of its own uses it', async () => {
    const helper: SubagentDefinition = {
      description: 'Helps',
      model: new MockLanguageModelV4({ modelId: 'child-model', doGenerate: [text('42')] }),
      modelOptions: { pricing: { 'child-model': { inputPerMillion: 10, outputPerMillion: 10 } } },
    };
    const root = createAgent({
      model: new MockLanguageModelV4({ modelId: 'root-model', doGenerate: [callChild('h1'), text('done')] }),
      modelOptions: { pricing },
      subagents: { agents: { helper } },
    });
    const state = await root.execute(ask());
    expect(state.steps()[0]?.toolExecutions()[0]?.childState()?.usage().cost).toBeCloseTo(0.02);
  });
});
