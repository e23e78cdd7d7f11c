import { describe, expect, it } from 'vitest';
import { InMemoryBudgetLedger } from '../../src/ledger/in-memory-budget-ledger';
import { AgentState } from '../../src/state/agent-state';
import { cappedAgent, expectCapHolds, firstCallCost, stoppedByLedger } from './support/cap-scenario';

const hi = () => AgentState.empty().withUserMessage('hi');

describe('InMemoryBudgetLedger under concurrent runs', () => {
  it('holds a tenant cap of 10 calls worth over 30 runs at once that each want 3 calls', async () => {
    const callCost = await firstCallCost();
    const ledger = new InMemoryBudgetLedger();
    const cap = 10 * callCost;
    await ledger.setLimit('tenant:acme', { maxCost: cap });
    const { agent, model } = cappedAgent(ledger);
    const states = await Promise.all(
      Array.from({ length: 30 }, () => agent.execute(hi(), { ledgerScopes: ['tenant:acme'] })),
    );
    await expectCapHolds(ledger, 'tenant:acme', cap, states);
    // far fewer calls than the 90 wanted were made
    expect(model.calls).toBeLessThan(90);
  });

  it("stops a user's runs at the user's cap inside the tenant's, and not another user's", async () => {
    const callCost = await firstCallCost();
    const ledger = new InMemoryBudgetLedger();
    await ledger.setLimit('tenant:acme', { maxCost: 1_000 * callCost });
    await ledger.setLimit('user:1', { maxCost: 4 * callCost });
    const { agent } = cappedAgent(ledger);
    const runs = (user: string) =>
      Array.from({ length: 5 }, () => agent.execute(hi(), { ledgerScopes: ['tenant:acme', user] }));
    const [ones, twos] = await Promise.all([Promise.all(runs('user:1')), Promise.all(runs('user:2'))]);
    expect(ones.some((state) => stoppedByLedger(state, 'user:1'))).toBe(true);
    for (const state of twos) expect(state.status()).toBe('completed');
    await expectCapHolds(ledger, 'user:1', 4 * callCost, ones);
    const tenant = await ledger.usage('tenant:acme');
    const all = [...ones, ...twos].reduce((sum, state) => sum + state.usage().cost, 0);
    expect(tenant.cost).toBeCloseTo(all, 12);
    expect(tenant.reservedCost).toBe(0);
  });
});
