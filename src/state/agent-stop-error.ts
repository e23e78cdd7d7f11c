import type { AgentState } from './agent-state';
import { AgentMachineError } from './errors';
import { StopReason, stopReasons } from './stop-reason';
import { StopSignal } from './stop-signal';

/**
 * Thrown by a hook, tool or driver to end the run on purpose. The execution stops with
 * StopReason.StopRequested (whatever reason you pass in `context`), the message and the source.
 *
 * @example
 * throw new AgentStopError('The user cancelled the order', { orderId }, 'cancelOrder');
 */
export class AgentStopError extends AgentMachineError {
  static override get name(): string {
    return 'AgentStopError';
  }

  /** Set by the loop's executors: the state as it stood when the stop was thrown. */
  state?: AgentState;
  /**
   * The stop reason recorded (StopRequested unless a subclass says otherwise: the budget ledger's
   * refusal is TokenLimitReached).
   */
  readonly stopReason?: StopReason;

  constructor(
    message: string,
    readonly context: Record<string, unknown> = {},
    readonly source = '',
  ) {
    super('AGENT_STOP', message);
  }

  /** True for an AgentStopError, also one from another copy of this package. */
  static is(value: unknown): value is AgentStopError {
    try {
      return (
        value instanceof AgentStopError ||
        (value instanceof Error && (value as { code?: unknown }).code === 'AGENT_STOP')
      );
    } catch {
      // a thrown revoked proxy, whose every inspection throws: not a stop, and AgentError.from records it
      return false;
    }
  }

  static toSignal(error: unknown): StopSignal {
    const stop = error as AgentStopError;
    const reason = stopReasons.includes(stop.stopReason as StopReason)
      ? (stop.stopReason as StopReason)
      : StopReason.StopRequested;
    return StopSignal.of(reason, stop.message, stop.context ?? {}, stop.source ?? '');
  }
}
