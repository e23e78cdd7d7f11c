import { AgentMachineError } from '../state/errors';

/**
 * `agent.chat(sessionId, text)` lost a race: another turn of the same session saved first, so this
 * turn's message was not added and nothing ran. `cause` is the store's SessionConflictError.
 */
export class ChatTurnConflictError extends AgentMachineError {
  static override get name(): string {
    return 'ChatTurnConflictError';
  }

  constructor(
    readonly sessionId: string,
    options?: { cause?: unknown },
  ) {
    super(
      'CHAT_TURN_CONFLICT',
      `Another turn of session ${JSON.stringify(sessionId)} started at the same time and saved first; ` +
        'this message was not added and nothing ran. Retry the turn (call agent.chat with the same ' +
        "message again), or send one session's messages one at a time.",
      options,
    );
  }
}
