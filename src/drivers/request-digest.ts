import type { AgentState } from '../state/agent-state';
import type { StepRequest } from '../state/agent-step';
import { inputJsonSchema, type ToolSet, toolDescription } from '../tools/define-tool';
import type { FunctionTool, ProviderTool } from './language-model';
import { providerTool } from './step-settings';

/** The tools as a model call offers them, and their digest. */
export interface DescribedTools {
  readonly list: ReadonlyArray<FunctionTool | ProviderTool>;
  readonly digest: string;
}

// One description per tool set: a run offers the same set at every step.
const described = new WeakMap<ToolSet, Promise<DescribedTools>>();

/** The tools as JSON Schema function tools (or provider tools), made once per tool set. */
export function describedTools(tools: ToolSet): Promise<DescribedTools> {
  let cached = described.get(tools);
  if (!cached) {
    cached = describeTools(tools).then((list) => ({ list, digest: digestOf(JSON.stringify(list)) }));
    described.set(tools, cached);
  }
  return cached;
}

async function describeTools(tools: ToolSet): Promise<Array<FunctionTool | ProviderTool>> {
  return Promise.all(
    Object.entries(tools).map(
      async ([name, tool]) =>
        providerTool(name, tool) ?? {
          type: 'function' as const,
          name,
          description: toolDescription(tool),
          inputSchema: await inputJsonSchema(tool.inputSchema),
        },
    ),
  );
}

let lastSystem = { text: '', digest: digestOf('') };

/**
 * What a step sends besides its messages, as digests: the system prompt, the tools offered
 * (their names, descriptions and input schemas) and the state's settings (`llmConfig`, response
 * format). The model driver records it on each step; a replay recomputes it and compares.
 *
 * @example
 * const request = await stepRequest(state, tools); // { system: '1k2...', tools: '...', settings: '...' }
 */
export async function stepRequest(state: AgentState, tools: ToolSet): Promise<StepRequest> {
  const { digest } = await describedTools(tools);
  return requestOf(state, digest);
}

/** `stepRequest` with the tools' digest known. */
export function requestOf(state: AgentState, toolsDigest: string): StepRequest {
  const system = state.systemPrompt();
  if (system !== lastSystem.text) lastSystem = { text: system, digest: digestOf(system) };
  const llmConfig = state.llmConfig();
  const format = state.responseFormat();
  const settings =
    llmConfig === null && format.type === 'text' ? PLAIN : digestOf(JSON.stringify([llmConfig, format]));
  return { system: lastSystem.digest, tools: toolsDigest, settings };
}

/** A 53-bit hash (cyrb53) of the text, in base 36: a change detector, not a security measure. */
export function digestOf(text: string): string {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return (4294967296 * (2097151 & h2) + (h1 >>> 0)).toString(36);
}

const PLAIN = digestOf(JSON.stringify([null, { type: 'text' }]));
