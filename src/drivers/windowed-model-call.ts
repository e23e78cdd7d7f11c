import type { LanguageModelV4, LanguageModelV4CallOptions } from '@ai-sdk/provider';
import { contextOverflowOf } from '../context/context-overflow';
import type { ContextWindow, Fitted } from '../context/context-window';
import { estimateTextTokens } from '../context/token-estimate';
import type { AgentState } from '../state/agent-state';
import type { Message } from '../state/message';
import { Usage } from '../state/usage';
import type { DriverContext } from './driver';
import { callModel, type ModelCallOptions } from './model-call';
import type { CollectedResult } from './model-stream';

export interface WindowedCall {
  /** The state the step is recorded on (with a new summary when one was made). */
  readonly state: AgentState;
  readonly result: CollectedResult;
  /** Usage of the summarization calls, added to the step's. */
  readonly extraUsage: Usage;
}

/**
 * A step's model call with its prompt kept within the context window: `messages` (the compiled
 * conversation) are fitted, each compaction reported as a `context.compacted` event, and a prompt
 * the provider refuses as too long is compacted once more (forced) and sent again. A second
 * refusal, or any other error, is thrown as it is.
 */
export async function callWithinWindow(
  window: ContextWindow,
  model: LanguageModelV4,
  call: LanguageModelV4CallOptions,
  toPrompt: (messages: readonly Message[]) => LanguageModelV4CallOptions['prompt'],
  state: AgentState,
  messages: readonly Message[],
  context: DriverContext,
  options: ModelCallOptions,
): Promise<WindowedCall> {
  const request = {
    messages,
    fixedEstimate: fixedEstimate(state.systemPrompt(), call.tools),
    run: context.run,
    signal: context.signal,
  };
  let fitted = await window.fit({ ...request, state });
  report(fitted, state, context);
  let extraUsage = fitted.usage;
  let result: CollectedResult;
  try {
    result = await callModel(
      model,
      { ...call, prompt: toPrompt(fitted.messages) },
      fitted.state,
      context,
      options,
    );
  } catch (error) {
    const refused = contextOverflowOf(error);
    if (!refused) throw error;
    fitted = await window.fit({ ...request, state: fitted.state, refused });
    if (!fitted.compaction) throw error;
    report(fitted, state, context);
    extraUsage = Usage.add(extraUsage, fitted.usage);
    result = await callModel(
      model,
      { ...call, prompt: toPrompt(fitted.messages) },
      fitted.state,
      context,
      options,
    );
  }
  window.observe(context.run, fitted.estimate, result.usage.inputTokens.total ?? 0);
  return { state: fitted.state, result, extraUsage };
}

function report(fitted: Fitted, state: AgentState, context: DriverContext): void {
  if (!fitted.compaction) return;
  context.report({
    type: 'context.compacted',
    agentId: state.agentId(),
    parentAgentId: state.parentAgentId(),
    executionId: state.executionId() ?? '',
    stepNumber: state.stepCount() + 1,
    ...fitted.compaction,
  });
}

const toolEstimates = new WeakMap<object, number>();

/** System prompt and tool schemas: sent with every call, counted once per tool list. */
function fixedEstimate(systemPrompt: string, tools: LanguageModelV4CallOptions['tools']): number {
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
