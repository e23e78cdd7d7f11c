/** Where an execution is in its lifecycle. `pending` means between executions (no execution). */
export const ExecutionStatus = {
  Pending: 'pending',
  InProgress: 'in_progress',
  Completed: 'completed',
  Stopped: 'stopped',
  Failed: 'failed',
} as const;
export type ExecutionStatus = (typeof ExecutionStatus)[keyof typeof ExecutionStatus];

export const executionStatuses = Object.values(ExecutionStatus) as [ExecutionStatus, ...ExecutionStatus[]];

export function isTerminalStatus(status: ExecutionStatus): boolean {
  return status === 'completed' || status === 'stopped' || status === 'failed';
}
