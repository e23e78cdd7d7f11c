import { InvalidArgumentError, shownValue } from '../state/errors';
import { checkLimit as checkBudgetLimit } from '../state/execution-budget';

/** How often a scope's usage starts again: each UTC day, each UTC month, or never (`null`). */
export type LedgerPeriod = 'day' | 'month' | null;

/** A scope's cap: cost (in the currency of `modelOptions.pricing`) and/or tokens, per period. */
export interface LedgerLimit {
  readonly maxCost?: number | null;
  readonly maxTokens?: number | null;
  /** `'day'` or `'month'` (UTC calendar: usage starts again at its start) or `null` (never resets, the default). */
  readonly period?: LedgerPeriod;
}

/** A scope's usage in its current period: spent (settled) and reserved by calls in flight. */
export interface LedgerUsage {
  readonly cost: number;
  readonly tokens: number;
  readonly reservedCost: number;
  readonly reservedTokens: number;
}

/**
 * What one model call may use at worst: its tokens and cost. `null` when it cannot be bounded (no
 * `maxOutputTokens`; no price for the model): a scope capped on that measure refuses it.
 */
export interface LedgerAmount {
  readonly cost: number | null;
  readonly tokens: number | null;
}

/** What a call really used, settled on every scope of its reservation. */
export interface LedgerSpend {
  readonly cost: number;
  readonly tokens: number;
}

/**
 * The answer to a reservation: held on every scope; refused by the first scope that cannot
 * cover it (`measure` says which cap: its spent, reserved and max are in that measure); or
 * `unbounded` when a scope caps a measure the amount has no bound for (no price, no maxOutputTokens).
 */
export type LedgerReservation =
  | { readonly status: 'reserved' }
  | {
      readonly status: 'refused';
      readonly scope: string;
      readonly measure: 'cost' | 'tokens';
      readonly spent: number;
      readonly reserved: number;
      readonly max: number;
    }
  | { readonly status: 'unbounded'; readonly scope: string; readonly measure: 'cost' | 'tokens' };

/**
 * A budget shared by runs, processes and subagents: per scope (any string: `'tenant:acme'`,
 * `'user:42'`), a cap in cost and/or tokens per period. Before every model call, the run reserves
 * the call's worst case on all its scopes at once (all or none); after it, the reservation settles
 * to the call's real usage, or is released when the call failed. `InMemoryBudgetLedger` serves one
 * process, `RedisBudgetLedger` every process over one Redis.
 *
 * `reserve`, `renew`, `settle` and `release` are what the agent calls around each model call
 * (`key` names the reservation: one per step, the same across retries and fallback models).
 */
export interface BudgetLedger {
  /** How long a reservation outlives its process's last renewal (ms); absent where reservations need no lease. */
  readonly leaseMs?: number;
  /** Sets (replaces) `scope`'s cap. Bad limits are InvalidArgumentError. */
  setLimit(scope: string, limit: LedgerLimit): Promise<void>;
  /** `scope`'s usage in its current period. */
  usage(scope: string): Promise<LedgerUsage>;
  /** Holds `amount` on every one of `scopes` if each can cover it, else none. A reservation under `key` is replaced. */
  reserve(key: string, scopes: readonly string[], amount: LedgerAmount): Promise<LedgerReservation>;
  /** Extends the lease of the reservation `key` (a call still in flight), where leases expire. */
  renew(key: string): Promise<void>;
  /** Ends the reservation `key` (if still held) and charges `spent` to each of `scopes`' current period. */
  settle(key: string, scopes: readonly string[], spent: LedgerSpend): Promise<void>;
  /** Ends the reservation `key` (if still held) without charging anything. */
  release(key: string): Promise<void>;
  /** Releases the ledger's connections (nothing for the in-memory one). */
  close(): Promise<void>;
}

/** The ledger of a run and the scopes it charges (`createAgent({ ledger })`, `execute(state, { ledgerScopes })`). */
export interface LedgerRun {
  readonly ledger: BudgetLedger;
  readonly scopes: readonly string[];
}

/** What the ledger keeps of a limit: checked, `null` for no cap. */
export interface CheckedLimit {
  readonly maxCost: number | null;
  readonly maxTokens: number | null;
  readonly period: LedgerPeriod;
}

/** Checks a scope and its limit; bad values are InvalidArgumentError naming them. */
export function checkLimit(scope: unknown, limit: unknown): CheckedLimit {
  checkScope(scope, 'setLimit(scope)');
  if (typeof limit !== 'object' || limit === null || Array.isArray(limit))
    throw new InvalidArgumentError('setLimit(scope, limit)', `expected an object, got ${shownValue(limit)}`);
  const { maxCost, maxTokens, period } = limit as Record<string, unknown>;
  const checked: CheckedLimit = {
    maxCost: checkMax('maxCost', maxCost, false),
    maxTokens: checkMax('maxTokens', maxTokens, true),
    period: period === undefined ? null : (period as LedgerPeriod),
  };
  if (checked.period !== null && checked.period !== 'day' && checked.period !== 'month')
    throw new InvalidArgumentError(
      'setLimit(scope, { period })',
      `expected 'day', 'month' or null, got ${shownValue(period)}`,
    );
  return checked;
}

/** A scope is a non-empty string. */
export function checkScope(scope: unknown, argument: string): asserts scope is string {
  if (typeof scope !== 'string' || scope.length === 0)
    throw new InvalidArgumentError(argument, `expected a non-empty string, got ${shownValue(scope)}`);
}

/** A ledger limit, checked as a budget's limits are. */
function checkMax(name: string, value: unknown, integer: boolean): number | null {
  return checkBudgetLimit(`setLimit(scope, { ${name} })`, value, integer);
}

/** The key of the period `now` falls in (UTC): `'2026-12-06'` for a day, `'2026-12'` for a month, `''` for none. */
export function periodKey(period: LedgerPeriod, now: number): string {
  if (period === null) return '';
  const iso = new Date(now).toISOString();
  return period === 'day' ? iso.slice(0, 10) : iso.slice(0, 7);
}

/** Options both ledgers take. */
export interface LedgerClock {
  /** The clock that says which period usage falls in (ms since the epoch); default `Date.now`. */
  readonly now?: () => number;
}
