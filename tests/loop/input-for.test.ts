import { describe, expect, it } from 'vitest';
import { createActor } from 'xstate';
import type { IntentSave } from '../../machines/agentLoop';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { InMemoryBudgetLedger } from '../../src/ledger/in-memory-budget-ledger';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { add, addCall, waitForState } from '../support/agents';

const question = () => AgentState.empty().withUserMessage('2 + 3?');
const agentWithTools = () =>
  createAgent({
    driver: scriptedDriver([{ toolCalls: [addCall()] }, { text: '5' }]),
    tools: { add },
    systemPrompt: 'You add.',
    ledger: new InMemoryBudgetLedger(),
  });

describe('agent.inputFor', () => {
  it('takes the run options as an object: budget, session, reports, observed, intent save, ledger scopes', () => {
    const agent = agentWithTools();
    const budget = new ExecutionBudget({ maxSteps: 2 });
    const session = { id: 's1', version: 3 };
    const intentSave: IntentSave = async () => {};
    const input = agent.inputFor(question(), {
      budget,
      session,
      reports: false,
      observed: true,
      intentSave,
      ledgerScopes: ['tenant:a'],
    });
    expect(input.budget).toBe(budget);
    expect(input.session).toBe(session);
    expect([input.reports, input.observed]).toEqual([false, true]);
    expect(input.intentSave).toBe(intentSave);
    expect(input.ledgerScopes).toEqual(['tenant:a']);
    // the state a run starts with: the definition's system prompt applied
    expect(input.state.systemPrompt()).toBe('You add.');
  });

  it("defaults to the definition's budget, no session, a run that reports and is observed as it reports", () => {
    const agent = agentWithTools();
    const input = agent.inputFor(question());
    expect(input.budget).toBe(agent.budget);
    expect([input.session, input.intentSave, input.ledgerScopes]).toEqual([null, null, []]);
    expect([input.reports, input.observed]).toEqual([true, true]);
    expect(agent.inputFor(question(), { reports: false }).observed).toBe(false);
    expect(agent.inputFor(question(), {}).budget).toBe(agent.budget);
  });

  it('still takes the deprecated arguments, to the same input', () => {
    const agent = agentWithTools();
    const budget = new ExecutionBudget({ maxSteps: 2 });
    const session = { id: 's1', version: 3 };
    const { state: _a, ...positional } = agent.inputFor(question(), budget, session, false, undefined, true, [
      'tenant:a',
    ]);
    const { state: _b, ...named } = agent.inputFor(question(), {
      budget,
      session,
      reports: false,
      observed: true,
      ledgerScopes: ['tenant:a'],
    });
    expect(positional).toEqual(named);
    expect(agent.inputFor(question(), budget).budget).toBe(budget);
  });

  it('runs on the input it gives: a run that reports none of its tool calls with reports false', async () => {
    const agent = agentWithTools();
    const seen: string[] = [];
    const actor = createActor(agent.machine, { input: agent.inputFor(question(), { reports: false }) });
    actor.on('*', (event) => seen.push(event.type));
    actor.start();
    actor.send({ type: 'execute' });
    await waitForState(actor, (s) => s.value === 'completed');
    expect(actor.getSnapshot().context.state.finalResponse()).toBe('5');
    actor.stop();
    expect(seen.filter((type) => type.startsWith('tool.'))).toEqual([]);
  });
});
