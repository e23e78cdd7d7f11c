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
