import { describe, expect, it } from 'vitest';
import type { BudgetLedger } from '../../../src/ledger/budget-ledger';

/** A ledger made with a clock the test moves (`now`). */
export type LedgerFactory = (now: () => number) => Promise<BudgetLedger> | BudgetLedger;

const EMPTY = { cost: 0, tokens: 0, reservedCost: 0, reservedTokens: 0 };

/** The behaviour both ledgers share, through their own API. */
export function ledgerContract(name: string, make: LedgerFactory): void {
  describe(`${name}: the BudgetLedger contract`, () => {
    const clocked = async (start: string) => {
      let now = Date.parse(start);
      const ledger = await make(() => now);
      return { ledger, at: (iso: string) => (now = Date.parse(iso)) };
    };

    it('holds a reservation on every scope or on none', async () => {
      const { ledger } = await clocked('2026-12-06T10:00:00Z');
      await ledger.setLimit('user:1', { maxCost: 1 });
      expect(await ledger.reserve('k1', ['tenant', 'user:1'], { cost: 0.75, tokens: 10 })).toEqual({
        status: 'reserved',
      });
      expect(await ledger.usage('tenant')).toEqual({ ...EMPTY, reservedCost: 0.75, reservedTokens: 10 });
      expect(await ledger.reserve('k2', ['tenant', 'user:1'], { cost: 0.5, tokens: 10 })).toEqual({
        status: 'refused',
        scope: 'user:1',
        measure: 'cost',
        spent: 0,
        reserved: 0.75,
        max: 1,
      });
      // the refused one held nothing on `tenant`
      expect((await ledger.usage('tenant')).reservedCost).toBe(0.75);
      await ledger.settle('k1', ['tenant', 'user:1'], { cost: 0.25, tokens: 4 });
      expect(await ledger.usage('user:1')).toEqual({ ...EMPTY, cost: 0.25, tokens: 4 });
      expect(await ledger.reserve('k2', ['tenant', 'user:1'], { cost: 0.5, tokens: 10 })).toEqual({
        status: 'reserved',
      });
      await ledger.release('k2');
      expect(await ledger.usage('tenant')).toEqual({ ...EMPTY, cost: 0.25, tokens: 4 });
      await ledger.close();
    });

    it('replaces a reservation under the same key (a step run again) instead of holding it twice', async () => {
      const { ledger } = await clocked('2026-12-06T10:00:00Z');
      await ledger.reserve('step', ['t'], { cost: 0.5, tokens: 5 });
      await ledger.reserve('step', ['t'], { cost: 0.5, tokens: 5 });
      expect(await ledger.usage('t')).toEqual({ ...EMPTY, reservedCost: 0.5, reservedTokens: 5 });
      await ledger.settle('step', ['t'], { cost: 0.125, tokens: 2 });
      // settled once; a second release finds nothing held
      await ledger.release('step');
      expect(await ledger.usage('t')).toEqual({ ...EMPTY, cost: 0.125, tokens: 2 });
      await ledger.close();
    });

    it('refuses an amount it cannot bound on a scope that caps it, and takes it where uncapped', async () => {
      const { ledger } = await clocked('2026-12-06T10:00:00Z');
      await ledger.setLimit('tokens-only', { maxTokens: 100 });
      expect(await ledger.reserve('a', ['tokens-only'], { cost: null, tokens: 10 })).toEqual({
        status: 'reserved',
      });
      expect(await ledger.reserve('b', ['tokens-only'], { cost: 1, tokens: null })).toEqual({
        status: 'unbounded',
        scope: 'tokens-only',
        measure: 'tokens',
      });
      await ledger.release('a');
      await ledger.close();
    });

    it("starts a daily scope's usage again at the next UTC day, a monthly one at the next month", async () => {
      const { ledger, at } = await clocked('2026-12-31T23:59:00Z');
      await ledger.setLimit('daily', { maxCost: 1, period: 'day' });
      await ledger.setLimit('monthly', { maxCost: 1, period: 'month' });
      await ledger.setLimit('forever', { maxCost: 1 });
      for (const scope of ['daily', 'monthly', 'forever']) {
        await ledger.reserve(scope, [scope], { cost: 1, tokens: 1 });
        await ledger.settle(scope, [scope], { cost: 1, tokens: 1 });
        expect((await ledger.reserve(`${scope}-2`, [scope], { cost: 0.5, tokens: 1 })).status).toBe(
          'refused',
        );
      }
      at('2027-01-01T00:00:01Z');
      expect(await ledger.usage('daily')).toEqual(EMPTY);
      expect(await ledger.usage('monthly')).toEqual(EMPTY);
      expect((await ledger.usage('forever')).cost).toBe(1);
      expect((await ledger.reserve('d2', ['daily'], { cost: 0.5, tokens: 1 })).status).toBe('reserved');
      await ledger.settle('d2', ['daily'], { cost: 0.5, tokens: 1 });
      at('2027-01-02T08:00:00Z');
      expect((await ledger.usage('daily')).cost).toBe(0);
      await ledger.settle('m2', ['monthly'], { cost: 0.5, tokens: 1 });
      at('2027-01-31T23:00:00Z');
      expect((await ledger.usage('monthly')).cost).toBe(0.5);
      at('2027-02-01T00:00:00Z');
      expect((await ledger.usage('monthly')).cost).toBe(0);
      await ledger.close();
    });
  });
}
