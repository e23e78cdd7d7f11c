import { AgentStopError } from '../state/agent-stop-error';
import { StopReason } from '../state/stop-reason';

/** The stop signal's source when the budget ledger refuses a model call. */
export const LEDGER_GUARD = 'budgetLedger';

/** What the stop signal of a ledger's refusal says: the scope that refused, in the measure of its cap. */
export interface LedgerLimitContext {
  readonly limit: 'ledger';
  readonly scope: string;
  /** Which cap refused: `'cost'` (maxCost) or `'tokens'` (maxTokens); spent, reserved and max are in it. */
  readonly measure: 'cost' | 'tokens';
  /** Settled in the scope's current period. */
  readonly spent: number;
  /** Held by other calls in flight. */
  readonly reserved: number;
  readonly max: number;
  /** What this call would have reserved (its worst case). */
  readonly wanted: number;
}

/**
 * A scope of the run's budget ledger cannot cover the next model call's worst case: no model call
 * starts, and the run stops (status stopped, stop reason `token_limit_reached`), its stop signal's
 * context naming the scope (LedgerLimitContext). Thrown by the model driver; the chart records it
 * as any stop exception of a model call.
 */
export class LedgerLimitError extends AgentStopError {
  static override get name(): string {
    return 'LedgerLimitError';
  }

  override readonly stopReason = StopReason.TokenLimitReached;

  constructor(readonly limit: LedgerLimitContext) {
    const shown = (n: number) => (limit.measure === 'cost' ? String(Math.round(n * 1e6) / 1e6) : String(n));
    super(
      `Budget ledger: scope '${limit.scope}' cannot cover the next model call (${limit.measure}: ` +
        `spent ${shown(limit.spent)} + reserved ${shown(limit.reserved)} + this call's worst case ` +
        `${shown(limit.wanted)} > max ${shown(limit.max)})`,
      { ...limit },
      LEDGER_GUARD,
    );
  }
}
