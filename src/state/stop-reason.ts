/** Why an execution stopped. The order below is the priority order: the first is the highest. */
export const StopReason = {
  ErrorForbade: 'error_forbade',
  StopRequested: 'stop_requested',
  StepsLimitReached: 'steps_limit_reached',
  TokenLimitReached: 'token_limit_reached',
  TimeLimitReached: 'time_limit_reached',
  RetryLimitReached: 'retry_limit_reached',
  FinishReasonReceived: 'finish_reason_received',
  UserRequested: 'user_requested',
  Completed: 'completed',
  Unknown: 'unknown',
} as const;
export type StopReason = (typeof StopReason)[keyof typeof StopReason];

export const stopReasons = Object.values(StopReason) as [StopReason, ...StopReason[]];

const priorities = new Map<StopReason, number>(stopReasons.map((reason, index) => [reason, index]));

/** 0 is the highest priority (ErrorForbade), 9 the lowest (Unknown). */
export function stopReasonPriority(reason: StopReason): number {
  return priorities.get(reason) ?? stopReasons.length;
}

/** True for every reason but the two natural ends, Completed and FinishReasonReceived. */
export function wasForceStopped(reason: StopReason): boolean {
  return reason !== StopReason.Completed && reason !== StopReason.FinishReasonReceived;
}

/**
 * The reasons that end a run Failed rather than Stopped when errors were recorded: an error forbade
 * going on, or errors kept coming. Without any recorded error they end it Stopped.
 */
export function failsTheRun(reason: StopReason): boolean {
  return reason === StopReason.ErrorForbade || reason === StopReason.RetryLimitReached;
}
