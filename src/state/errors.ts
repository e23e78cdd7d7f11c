/** Marks an AgentMachineError of any copy of this library (two versions installed side by side). */
const MARKER = 'agent-machine.error';

/**
 * Base class of every error this library raises on purpose. `code` is stable and machine-readable;
 * the message says what was wrong and what to change.
 *
 * Each class declares its name (a static `name` getter: the CommonJS build turns a static field
 * into an assignment, and a class's `name` is read-only): it is the error's `name`, recorded in
 * states, and must not depend on what a bundler calls the class. Like the AI SDK's errors, each
 * instance carries a `Symbol.for('agent-machine.error')` marker and one per class of its chain, so
 * `SomeError.isInstance(error)` holds for an error made by another copy of the library, where
 * `instanceof` does not.
 */
export class AgentMachineError extends Error {
  static override get name(): string {
    return 'AgentMachineError';
  }

  constructor(
    readonly code: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = new.target.name;
    for (let type: object = new.target; type !== Error; type = Object.getPrototypeOf(type))
      Object.defineProperty(this, Symbol.for(markerOf(type as typeof AgentMachineError)), { value: true });
  }

  /** True for an error of this class (or a subclass), made by this copy of the library or another. */
  static isInstance<E>(this: abstract new (...args: never[]) => E, error: unknown): error is E {
    // biome-ignore lint/complexity/noThisInStatic: the class it is called on picks the marker
    const marker = Symbol.for(markerOf(this));
    return typeof error === 'object' && error !== null && (error as Record<symbol, unknown>)[marker] === true;
  }
}

function markerOf(type: { readonly name: string }): string {
  return type.name === AgentMachineError.name ? MARKER : `${MARKER}.${type.name}`;
}

/** Serialized state that does not match its schema. `path` names the first bad field. */
export class InvalidStateError extends AgentMachineError {
  static override get name(): string {
    return 'InvalidStateError';
  }

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
  static override get name(): string {
    return 'InvalidArgumentError';
  }

  constructor(
    readonly argument: string,
    detail: string,
  ) {
    super('INVALID_ARGUMENT', `Invalid ${argument}: ${detail}`);
  }
}

/**
 * A hook or driver returned what the loop cannot take (a hook's string, a driver's null, a block
 * reason that is not text). `who` names it (`Hook 'gate' (beforeToolUse)`, `Driver 'mine'`).
 */
export class InvalidReturnValueError extends AgentMachineError {
  static override get name(): string {
    return 'InvalidReturnValueError';
  }

  constructor(
    readonly who: string,
    readonly returned: string,
    expected: string,
  ) {
    super('INVALID_RETURN_VALUE', `${who} returned ${returned}: ${expected}`);
  }
}

/** A value as an error message shows it: `NaN`, `10n`, `"10"`, `Symbol(s)`, short JSON, else its type. */
export function shownValue(value: unknown): string {
  switch (typeof value) {
    case 'number':
      return String(value);
    case 'bigint':
      return `${value}n`;
    case 'symbol':
      return value.toString();
    case 'undefined':
      return 'undefined';
    case 'function':
      return 'a function';
    default:
      try {
        const text = JSON.stringify(value);
        return text.length > 80 ? `${text.slice(0, 80)}…` : text;
      } catch {
        return kindOf(value);
      }
  }
}

/** How a returned value is named in InvalidReturnValueError: its type, never its text. */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  return Array.isArray(value) ? 'array' : typeof value;
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
  static override get name(): string {
    return 'RunInProgressError';
  }

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
