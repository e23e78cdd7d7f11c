import { contextOverflowOf } from '../context/context-overflow';
import type { Summarizer } from '../context/context-summary';
import type { ContextWindow, Fitted } from '../context/context-window';
import { estimateTextTokens } from '../context/token-estimate';
import type { AgentState } from '../state/agent-state';
import type { AppendOnlyList } from '../state/append-only-list';
import { stepEventIds } from '../state/loop-events';
import type { Message } from '../state/message';
import { Usage } from '../state/usage';
import type { DriverContext } from './driver';
import type { CallableModel, CallOptions } from './language-model';
import type { ModelCallOptions } from './model-call';
import { AllModelsFailedError, callModels } from './model-fallback';
import type { CollectedResult } from './model-stream';

export interface WindowedCall {
  /** The state the step is recorded on (with a new summary when one was made). */
  readonly state: AgentState;
  readonly result: CollectedResult;
  /** The model that answered (the first, or a fallback model). */
  readonly model: CallableModel;
  /** Usage of the summarization calls, added to the step's. */
  readonly extraUsage: Usage;
}

/**
 * A step's model call with its prompt kept within the context window: `messages` (the compiled
 * conversation) are fitted, each compaction reported as a `context.compacted` event, and a prompt
 * the provider refuses as too long is compacted once more (forced) and sent again. A second
 * refusal, or any other error, is thrown as it is. `summarize`, when given, makes the step's
 * summaries in place of the window's own summarizer (charging the run's budget ledger).
 */
export async function callWithinWindow(
  window: ContextWindow,
  models: readonly CallableModel[],
  call: CallOptions,
  toPrompt: (messages: readonly Message[]) => CallOptions['prompt'],
  state: AgentState,
  messages: readonly Message[] | AppendOnlyList<Message>,
  context: DriverContext,
  options: ModelCallOptions,
  summarize?: Summarizer,
): Promise<WindowedCall> {
  const request = {
    messages,
    summarize,
    fixedEstimate: fixedEstimate(state.systemPrompt(), call.tools),
    run: context.run,
    signal: context.signal,
  };
  let fitted = await window.fit({ ...request, state });
  report(fitted, state, context);
  let extraUsage = fitted.usage;
  let answered: { result: CollectedResult; model: CallableModel };
  try {
    answered = await callModels(
      models,
      { ...call, prompt: toPrompt(fitted.messages) },
      fitted.state,
      context,
      options,
    );
  } catch (error) {
    // with fallback models, the first model's refusal is the one about this prompt
    const refused = contextOverflowOf(error instanceof AllModelsFailedError ? error.errors[0] : error);
    if (!refused) throw error;
    fitted = await window.fit({ ...request, state: fitted.state, refused });
    if (!fitted.compaction) throw error;
    report(fitted, state, context);
    extraUsage = Usage.add(extraUsage, fitted.usage);
    answered = await callModels(
      models,
      { ...call, prompt: toPrompt(fitted.messages) },
      fitted.state,
      context,
      options,
    );
  }
  const { result, model } = answered;
  window.observe(context.run, fitted.estimate, result.usage.inputTokens.total ?? 0);
  return { state: fitted.state, result, model, extraUsage };
}

function report(fitted: Fitted, state: AgentState, context: DriverContext): void {
  if (!fitted.compaction) return;
  context.report({
    type: 'context.compacted',
    ...stepEventIds(state),
    ...fitted.compaction,
  });
}

const toolEstimates = new WeakMap<object, number>();

/** System prompt and tool schemas: sent with every call, counted once per tool list. */
function fixedEstimate(systemPrompt: string, tools: CallOptions['tools']): number {
  let tokens = estimateTextTokens(systemPrompt);
  if (tools) {
    let estimate = toolEstimates.get(tools);
    if (estimate === undefined) {
      estimate = estimateTextTokens(JSON.stringify(tools));
      toolEstimates.set(tools, estimate);
    }
    tokens += estimate;
  }
  return tokens;
}
