/**
 * Base class of every error this library raises on purpose. `code` is stable and machine-readable;
 * the message says what was wrong and what to change.
 */
export class AgentMachineError extends Error {
  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** Serialized state that does not match its schema. `path` names the first bad field. */
export class InvalidStateError extends AgentMachineError {
  constructor(
    readonly path: string,
    readonly detail: string,
    readonly what = 'AgentState',
    options?: { cause?: unknown },
  ) {
    super('INVALID_STATE', `Invalid ${what} at ${path || '(root)'}: ${detail}`, options);
  }
}

/** A value passed to a constructor or `with*` method that the model cannot hold. */
export class InvalidArgumentError extends AgentMachineError {
  constructor(
    readonly argument: string,
    detail: string,
  ) {
    super('INVALID_ARGUMENT', `Invalid ${argument}: ${detail}`);
  }
}

/**
 * A message steered (`{ type: 'steer' }`) into an agent that runs nothing: send it as
 * `user.message` instead, which starts a run. Refused with an `event.refused` event.
 */
export class NoRunInProgressError extends AgentMachineError {
  constructor(readonly event: string) {
    super(
      'NO_RUN_IN_PROGRESS',
      `'${event}' refused: no execution is in progress to steer; send the message as 'user.message' to start one`,
    );
  }
}

/**
 * An event the agent cannot take while a run is in progress (`user.message`, `execute`): the
 * actor refuses it with an `event.refused` event carrying this error, and changes nothing.
 */
export class RunInProgressError extends AgentMachineError {
  constructor(
    readonly event: string,
    readonly executionId: string | null,
  ) {
    super(
      'RUN_IN_PROGRESS',
      `'${event}' refused: execution ${executionId ?? '(none)'} is in progress; send it once the run ` +
        "has ended (after 'execution.finished'), or send 'stop' first",
    );
  }
}
