import type { AgentState } from '../state/agent-state';
import type { Tool } from '../tools/define-tool';
import type { LanguageModel, ProviderTool, ToolChoice } from './language-model';

/** What `prepareStep` may choose for one step; what it leaves out stays as configured. */
export interface StepSettings {
  readonly model?: LanguageModel;
  readonly toolChoice?: ToolChoice;
  /** Only these of the agent's tools are offered to the model in this step. */
  readonly activeTools?: readonly string[];
}

/**
 * Chooses the settings of a step from the state it starts from (the AI SDK's `prepareStep`): a
 * stronger model after a failure, a forced tool on the first step, fewer tools later on.
 *
 * @example
 * const prepareStep: PrepareStep = (state) => (state.stepCount() === 0 ? { toolChoice: { type: 'tool', toolName: 'search' } } : undefined);
 */
export type PrepareStep = (
  state: AgentState,
) => StepSettings | undefined | PromiseLike<StepSettings | undefined>;

/**
 * The model of a step: the one `prepareStep` chose, else the one of `models` the state's
 * `llmConfig.model` names (a hook may set it), else the driver's own.
 */
export function stepModel(
  state: AgentState,
  chosen: StepSettings | undefined,
  models: Readonly<Record<string, LanguageModel>> | undefined,
): LanguageModel | undefined {
  if (chosen?.model) return chosen.model;
  const named = state.llmConfig()?.model;
  return typeof named === 'string' && models && Object.hasOwn(models, named) ? models[named] : undefined;
}

/**
 * A tool the provider defines (`openai.tools.webSearch()`, `anthropic.tools.codeExecution_...()`):
 * passed to the model as such, by its provider id, not as a function with a JSON Schema.
 */
export function providerTool(name: string, tool: Tool): ProviderTool | null {
  const { type, id, args } = tool as Tool & { type?: unknown; id?: unknown; args?: unknown };
  if ((type !== 'provider' && type !== 'provider-defined') || typeof id !== 'string' || !id.includes('.'))
    return null;
  return {
    type: 'provider',
    id: id as ProviderTool['id'],
    name,
    args: (args ?? {}) as Record<string, unknown>,
  };
}

/** The tools offered in a step: all of them, or the `activeTools` of the step's settings. */
export function activeTools<T extends { readonly name: string }>(
  tools: T[],
  chosen: StepSettings | undefined,
): T[] {
  if (!chosen?.activeTools) return tools;
  const active = new Set(chosen.activeTools);
  return tools.filter((tool) => active.has(tool.name));
}
