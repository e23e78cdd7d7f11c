import type { AgentState } from '../state/agent-state';
import { AgentMachineError } from '../state/errors';
import type { ReportEvent } from '../state/loop-events';
import type { DriverContext } from './driver';
import type { CallableModel, CallOptions } from './language-model';
import { callModel, type ModelCallOptions } from './model-call';
import type { CollectedResult } from './model-stream';

/**
 * Every model of a fallback chain failed the same step. `errors` holds each model's error, in the
 * order the models were asked; `cause` is the last one. The message names each model and what it said.
 */
export class AllModelsFailedError extends AgentMachineError {
  static override get name(): string {
    return 'AllModelsFailedError';
  }

  readonly errors: readonly unknown[];

  constructor(models: readonly CallableModel[], errors: readonly unknown[]) {
    const each = models.map(
      (model, i) => `${modelName(model)}: ${(errors[i] as Error)?.message ?? String(errors[i])}`,
    );
    super(
      'ALL_MODELS_FAILED',
      `All ${models.length} models failed this step (${each.join('; ')}); check the providers, or add fallbackModels that are up`,
      { cause: errors[errors.length - 1] },
    );
    this.errors = Object.freeze([...errors]);
  }
}

/** A model call's result and the model that gave it. */
export interface AnsweredCall {
  readonly result: CollectedResult;
  readonly model: CallableModel;
}

/**
 * One step's model call over a chain of models: the first model is called with its retries; an
 * error it does not recover from (not retryable, or retries run out) hands the same call to the
 * next model. An abort is never handed on, nor a streamed answer that failed after some of its
 * text went out. With one model its error is thrown unchanged; when a
 * chain of several all fail, an AllModelsFailedError lists every model's error.
 *
 * @example
 * const { result, model } = await callModels([primary, backup], call, state, context, { maxRetries: 2 });
 */
export async function callModels(
  models: readonly CallableModel[],
  call: CallOptions,
  state: AgentState,
  context: DriverContext,
  options: ModelCallOptions,
): Promise<AnsweredCall> {
  const [only] = models;
  if (models.length === 1 && only)
    return { result: await callModel(only, call, state, context, options), model: only };
  const errors: unknown[] = [];
  for (const model of models) {
    // A streamed answer that failed after its first text delta is not handed on: its text has gone out.
    let delivered = false;
    const watched: DriverContext = Object.create(context, {
      report: {
        value: (event: ReportEvent) => {
          delivered = true;
          context.report(event);
        },
      },
    });
    try {
      return { result: await callModel(model, call, state, watched, options), model };
    } catch (error) {
      if (context.signal.aborted || delivered) throw error;
      errors.push(error);
    }
  }
  throw new AllModelsFailedError(models, errors);
}

function modelName(model: CallableModel): string {
  return `${model.provider}/${model.modelId}`;
}
