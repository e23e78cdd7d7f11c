/** The budget ledger: caps per scope (tenant, user, ...) shared by runs, processes and subagents. */
export type {
  BudgetLedger,
  LedgerAmount,
  LedgerClock,
  LedgerLimit,
  LedgerPeriod,
  LedgerReservation,
  LedgerRun,
  LedgerSpend,
  LedgerUsage,
} from './budget-ledger';
export { InMemoryBudgetLedger } from './in-memory-budget-ledger';
export { LEDGER_GUARD, type LedgerLimitContext, LedgerLimitError } from './ledger-limit-error';
export {
  LedgerDependencyMissingError,
  RedisBudgetLedger,
  type RedisBudgetLedgerOptions,
} from './redis-budget-ledger';
