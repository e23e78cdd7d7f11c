import {
  type BudgetLedger,
  type CheckedLimit,
  checkLimit,
  checkScope,
  type LedgerAmount,
  type LedgerClock,
  type LedgerLimit,
  type LedgerReservation,
  type LedgerSpend,
  type LedgerUsage,
  periodKey,
} from './budget-ledger';

interface Spent {
  period: string;
  cost: number;
  tokens: number;
}

interface Held {
  cost: number;
  tokens: number;
  count: number;
}

interface Reservation {
  readonly scopes: readonly string[];
  readonly cost: number;
  readonly tokens: number;
}

/**
 * The budget ledger of one process: every run of the process's agents shares its caps. Each
 * operation runs to its end before another starts (one thread), so a reservation on several
 * scopes is atomic. A reservation lives as long as the process: no lease.
 *
 * @example
 * const ledger = new InMemoryBudgetLedger();
 * await ledger.setLimit('tenant:acme', { maxCost: 5, period: 'day' });
 * const agent = createAgent({ model, ledger, modelOptions: { pricing, callOptions: { maxOutputTokens: 1000 } } });
 * await agent.execute(state, { ledgerScopes: ['tenant:acme', 'user:42'] });
 */
export class InMemoryBudgetLedger implements BudgetLedger {
  readonly #limits = new Map<string, CheckedLimit>();
  readonly #spent = new Map<string, Spent>();
  readonly #held = new Map<string, Held>();
  readonly #reservations = new Map<string, Reservation>();
  readonly #now: () => number;

  constructor(options: LedgerClock = {}) {
    this.#now = options.now ?? Date.now;
  }

  async setLimit(scope: string, limit: LedgerLimit): Promise<void> {
    this.#limits.set(scope, checkLimit(scope, limit));
  }

  async usage(scope: string): Promise<LedgerUsage> {
    checkScope(scope, 'usage(scope)');
    const spent = this.#spentNow(scope);
    const held = this.#held.get(scope);
    return {
      cost: spent?.cost ?? 0,
      tokens: spent?.tokens ?? 0,
      reservedCost: held?.cost ?? 0,
      reservedTokens: held?.tokens ?? 0,
    };
  }

  async reserve(key: string, scopes: readonly string[], amount: LedgerAmount): Promise<LedgerReservation> {
    this.#drop(key);
    for (const scope of scopes) {
      const limit = this.#limits.get(scope);
      if (!limit) continue;
      const spent = this.#spentNow(scope);
      const held = this.#held.get(scope);
      for (const measure of ['cost', 'tokens'] as const) {
        const max = measure === 'cost' ? limit.maxCost : limit.maxTokens;
        if (max === null) continue;
        const wanted = amount[measure];
        if (wanted === null) return { status: 'unbounded', scope, measure };
        const used = spent?.[measure] ?? 0;
        const reserved = held?.[measure] ?? 0;
        if (used + reserved + wanted > max)
          return { status: 'refused', scope, measure, spent: used, reserved, max };
      }
    }
    const cost = amount.cost ?? 0;
    const tokens = amount.tokens ?? 0;
    for (const scope of scopes) {
      const held = this.#held.get(scope) ?? { cost: 0, tokens: 0, count: 0 };
      held.cost += cost;
      held.tokens += tokens;
      held.count += 1;
      this.#held.set(scope, held);
    }
    this.#reservations.set(key, { scopes: [...scopes], cost, tokens });
    return { status: 'reserved' };
  }

  async renew(_key: string): Promise<void> {}

  async settle(key: string, scopes: readonly string[], spent: LedgerSpend): Promise<void> {
    this.#drop(key);
    for (const scope of scopes) {
      const current = this.#spentNow(scope) ?? { period: this.#period(scope), cost: 0, tokens: 0 };
      current.cost += spent.cost;
      current.tokens += spent.tokens;
      this.#spent.set(scope, current);
    }
  }

  async release(key: string): Promise<void> {
    this.#drop(key);
  }

  async close(): Promise<void> {}

  #period(scope: string): string {
    return periodKey(this.#limits.get(scope)?.period ?? null, this.#now());
  }

  /** The scope's spending of the current period (none when the one kept is of an earlier period). */
  #spentNow(scope: string): Spent | undefined {
    const spent = this.#spent.get(scope);
    return spent && spent.period >= this.#period(scope) ? spent : undefined;
  }

  #drop(key: string): void {
    const reservation = this.#reservations.get(key);
    if (!reservation) return;
    this.#reservations.delete(key);
    for (const scope of reservation.scopes) {
      const held = this.#held.get(scope) as Held;
      held.count -= 1;
      // the last one out leaves exactly 0 (no float residue of additions and subtractions)
      if (held.count === 0) this.#held.delete(scope);
      else {
        held.cost -= reservation.cost;
        held.tokens -= reservation.tokens;
      }
    }
  }
}
