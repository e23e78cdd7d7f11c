import type { AgentState } from '../state/agent-state';
import { stepEventIds } from '../state/loop-events';
import { Usage } from '../state/usage';
import type { DriverContext } from './driver';
import type { CallableModel, CallOptions, ModelCallSettings } from './language-model';
import { type RetryOptions, withRetries } from './model-retries';
import { type CollectedResult, collectStream } from './model-stream';

/** Price per million tokens, in the currency the budget's `maxCost` uses. */
export interface ModelPrice {
  readonly inputPerMillion: number;
  readonly outputPerMillion: number;
}
export type PricingTable = Readonly<Record<string, ModelPrice>>;

export interface ModelCallOptions extends RetryOptions {
  /**
   * Stream the answer (`doStream`): each text delta is reported as a `text.delta` event
   * (`actor.on('text.delta', ...)`); the recorded step is the same as without streaming. Default false.
   */
  readonly stream?: boolean;
}

/**
 * One model call of a step, with retries: `doGenerate`, or `doStream` read to its end with every
 * text delta reported as a `text.delta` event of the state's agent. Only opening the call is
 * retried; a stream that fails part-way is not (its deltas have already gone out).
 *
 * @example
 * const result = await callModel(model, call, state, context, { stream: true, maxRetries: 2 });
 */
export async function callModel(
  model: CallableModel,
  call: CallOptions,
  state: AgentState,
  context: DriverContext,
  options: ModelCallOptions,
): Promise<CollectedResult> {
  if (!options.stream) return withRetries(() => model.doGenerate(call), context.signal, options);
  const opened = await withRetries(() => model.doStream(call), context.signal, options);
  const ids = stepEventIds(state);
  // a literal, not a spread of `ids` followed by a key: see stepEventIds
  return collectStream(opened, (delta) =>
    context.report({
      type: 'text.delta',
      agentId: ids.agentId,
      parentAgentId: ids.parentAgentId,
      executionId: ids.executionId,
      stepNumber: ids.stepNumber,
      delta,
    }),
  );
}

/**
 * A call's usage in the state's terms, with its cost from the pricing table (by `model.modelId`).
 *
 * @example
 * callUsage(result, model, { 'gpt-4o-mini': { inputPerMillion: 0.15, outputPerMillion: 0.6 } });
 */
export function callUsage(result: CollectedResult, model: CallableModel, pricing?: PricingTable): Usage {
  const inputTokens = result.usage.inputTokens.total ?? 0;
  const outputTokens = result.usage.outputTokens.total ?? 0;
  const price = pricing?.[model.modelId];
  const cost = price
    ? (inputTokens * price.inputPerMillion + outputTokens * price.outputPerMillion) / 1_000_000
    : 0;
  return Usage.of({ inputTokens, outputTokens, cost });
}

/** The state's `llmConfig` as call options (its `model` field names the model, not an option). */
export function llmConfigOptions(state: AgentState): ModelCallSettings {
  const config = state.llmConfig();
  if (!config) return {};
  const { model: _model, ...rest } = config as Record<string, unknown>;
  return rest as ModelCallSettings;
}
