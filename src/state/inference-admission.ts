import { AgentError } from './agent-error';
import { AgentState } from './agent-state';
import { type AgentStep, InferenceResponse } from './agent-step';
import { AgentMachineError, InvalidReturnValueError, kindOf } from './errors';
import { newId } from './ids';
import { asJsonValue } from './json-value';
import { Message, type ToolCall } from './message';
import type { Usage } from './usage';

/** A model (or driver) reported usage no budget can count: negative, NaN or infinite. */
export class InvalidUsageError extends AgentMachineError {
  static override get name(): string {
    return 'InvalidUsageError';
  }

  constructor(
    readonly field: string,
    readonly value: unknown,
  ) {
    super(
      'INVALID_USAGE',
      `The model reported ${field} = ${shown(value)}; token counts and cost must be finite numbers >= 0. ` +
        'Check the provider (or driver) that reported it.',
    );
  }
}

/** A reported value as the error shows it: a number as it is, a string quoted, anything else by its type. */
function shown(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'string') return `${JSON.stringify(value.slice(0, 40))} (a string)`;
  return value === null ? 'null' : `a value of type ${typeof value}`;
}

/** `details.refusedArguments` marks a step error that fails the call it names (`details.toolCallId`). */
const REFUSED_ARGUMENTS = 'refusedArguments';

/**
 * The state a driver answered with, made fit to be saved and loaded (an answer that is not an
 * AgentState raises InvalidReturnValueError naming `driver`): the step in flight gets usage
 * the budgets can count (else InvalidUsageError, an error for that step), an id of its own for each
 * tool call whose id is empty, repeated or `__proto__`, and arguments normalised to JSON
 * (`asJsonValue`). Arguments that cannot be kept (too deep, a cycle) are replaced by `null` and the
 * refusal is recorded on the step, so the tool executor fails that call with it.
 *
 * @example
 * const answered = admitInference(await driver.infer(state, context), driver.name);
 */
export function admitInference(answer: unknown, driver: string): AgentState {
  if (!(answer instanceof AgentState))
    throw new InvalidReturnValueError(
      `Driver '${driver}'`,
      kindOf(answer),
      'return the AgentState it was given with the step it made (state.withCurrentStep(...))',
    );
  const state = answer;
  const step = state.currentStep();
  if (step === null) return state;
  const response = step.inferenceResponse();
  checkUsage(response.usage);
  if (response.toolCalls.length === 0) return state;

  const seen = new Set<string>();
  const replaced = new Map<ToolCall, ToolCall>();
  const refusals: AgentError[] = [];
  for (const call of response.toolCalls) {
    let id = call.id;
    if (typeof id !== 'string' || id === '' || id === '__proto__' || seen.has(id)) id = `call_${newId()}`;
    seen.add(id);
    let args: unknown;
    let providerMetadata: ToolCall['providerMetadata'];
    try {
      args = asJsonValue(call.args, `The arguments of tool call '${id}' (${call.name})`);
      // what the provider attached to the call is sent back with it: stored like any run-time value
      if (call.providerMetadata !== undefined) {
        const what = `The provider metadata of tool call '${id}' (${call.name})`;
        providerMetadata = asJsonValue(call.providerMetadata, what) as ToolCall['providerMetadata'];
      }
    } catch (error) {
      args = null;
      const refused = AgentError.from(error);
      refusals.push(
        AgentError.of(refused.name, refused.message, refused.code, {
          toolCallId: id,
          [REFUSED_ARGUMENTS]: true,
        }),
      );
    }
    const name = String(call.name);
    if (
      id !== call.id ||
      name !== call.name ||
      !Object.is(args, call.args) ||
      providerMetadata !== call.providerMetadata
    )
      replaced.set(
        call,
        Object.freeze({ id, name, args, ...(providerMetadata !== undefined && { providerMetadata }) }),
      );
  }
  // The common case: ids of their own and plain JSON arguments; the step stays as the driver made it.
  if (replaced.size === 0) return state;
  const calls = response.toolCalls.map((call) => replaced.get(call) ?? call);
  const messages = step.outputMessages().map((message) =>
    message.toolCalls
      ? Message.of({
          ...message,
          toolCalls: message.toolCalls.map((c, i) => replaced.get(c) ?? calls[i] ?? c),
        })
      : message,
  );
  let admitted = step
    .withInferenceResponse(InferenceResponse.of({ ...response, toolCalls: calls }))
    .withOutputMessages(messages);
  for (const refusal of refusals) admitted = admitted.withError(refusal);
  return state.withCurrentStep(admitted);
}

/**
 * The error recorded for `call` when its arguments were refused on entry, or null. Only the call
 * as the model sent it is refused: arguments a hook or a person replaced run as given.
 */
export function refusedArguments(step: AgentStep, call: ToolCall): AgentError | null {
  if (call.args !== null || !step.requestedToolCalls().includes(call)) return null;
  for (const error of step.stepErrors()) {
    if (error.details?.[REFUSED_ARGUMENTS] === true && error.details.toolCallId === call.id) return error;
  }
  return null;
}

function checkUsage(usage: Usage): void {
  for (const field of ['inputTokens', 'outputTokens', 'totalTokens', 'cost'] as const) {
    const value = usage[field];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < 0)
      throw new InvalidUsageError(`usage.${field}`, value);
  }
}
