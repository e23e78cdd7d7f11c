import type { LanguageModelV4 } from '@ai-sdk/provider';
import type { Driver } from '../drivers/driver';
import type { ModelDriverOptions } from '../drivers/model-driver';
import type { ErrorPolicyOptions } from '../hooks/error-policy';
import type { Hook } from '../hooks/hook';
import type { ResponseSchema } from '../hooks/structured-output-guard';
import { AgentMachineError } from '../state/errors';
import { ExecutionBudget } from '../state/execution-budget';
import type { ToolSet } from '../tools/define-tool';

/** Everything that makes an agent. `model` or `driver` is required. */
export interface AgentDefinition {
  readonly name?: string;
  readonly description?: string;
  /** Any AI SDK LanguageModel (v4 specification). */
  readonly model?: LanguageModelV4;
  /** Model driver settings (retries, pricing, message compiler) when `model` is given. */
  readonly modelOptions?: ModelDriverOptions;
  /** A driver of your own (scripted, ReAct, ...) instead of `model`. */
  readonly driver?: Driver;
  readonly tools?: ToolSet;
  /**
   * The final answer must be JSON matching this schema (zod): the model is given it as its response
   * format, each final answer is validated, `state.structuredOutput()` holds the parsed value.
   */
  readonly responseFormat?: ResponseSchema;
  /** Used when the state has no system prompt of its own. */
  readonly systemPrompt?: string;
  /** Limits per execution. Default: `ExecutionBudget.default()` (20 steps); opt out with `unlimited()`. */
  readonly budget?: ExecutionBudget;
  readonly hooks?: readonly Hook[];
  /** Model finish reasons that end the run with FinishReasonReceived (e.g. `['length']`). */
  readonly finishReasons?: readonly string[];
  readonly errorPolicy?: ErrorPolicyOptions;
  /** Tool calls of one step run at most this many at a time. Default 8. */
  readonly toolConcurrency?: number;
  /** Default timeout of a tool call in ms. */
  readonly toolTimeoutMs?: number;
}

/** A definition the runtime cannot run; the message names the field. */
export class InvalidDefinitionError extends AgentMachineError {
  constructor(
    readonly field: string,
    detail: string,
  ) {
    super('INVALID_DEFINITION', `Invalid agent definition: ${field} ${detail}`);
  }
}

export function checkDefinition(definition: AgentDefinition): void {
  if (typeof definition !== 'object' || definition === null) {
    throw new InvalidDefinitionError('(root)', 'must be an object');
  }
  if (!definition.model && !definition.driver) {
    throw new InvalidDefinitionError(
      'model',
      'is missing: give a model (an AI SDK LanguageModel) or a driver',
    );
  }
  if (definition.model && typeof definition.model.doGenerate !== 'function') {
    throw new InvalidDefinitionError('model', 'is not an AI SDK LanguageModel (no doGenerate function)');
  }
  if (definition.driver && typeof definition.driver.infer !== 'function') {
    throw new InvalidDefinitionError('driver', 'has no infer(state, context) function');
  }
  if (definition.budget !== undefined && !(definition.budget instanceof ExecutionBudget)) {
    throw new InvalidDefinitionError(
      'budget',
      'must be an ExecutionBudget (new ExecutionBudget({ maxSteps: 10 }))',
    );
  }
  for (const [name, tool] of Object.entries(definition.tools ?? {})) {
    if (!tool || typeof tool !== 'object' || !tool.inputSchema) {
      throw new InvalidDefinitionError(
        `tools.${name}`,
        'needs an inputSchema (a zod schema or the AI SDK jsonSchema())',
      );
    }
  }
  const positive = (field: string, value: number | undefined) => {
    if (value !== undefined && (!Number.isFinite(value) || value <= 0)) {
      throw new InvalidDefinitionError(field, `must be a positive number, got ${value}`);
    }
  };
  positive('toolConcurrency', definition.toolConcurrency);
  positive('toolTimeoutMs', definition.toolTimeoutMs);
  positive('errorPolicy.maxConsecutiveErrorSteps', definition.errorPolicy?.maxConsecutiveErrorSteps);
}
