import { toPromptMessage } from '../messages/prompt-message';
import type { PromptMessage } from '../messages/shapes';
import { AgentError } from '../state/agent-error';
import type { AgentState } from '../state/agent-state';
import { AgentStep, InferenceResponse } from '../state/agent-step';
import { newId } from '../state/ids';
import { Message, type ToolCall } from '../state/message';
import { inputJsonSchema, type ToolSet, toolDescription } from '../tools/define-tool';
import type { Driver } from './driver';
import { type CallableModel, type CallOptions, callable, type LanguageModel } from './language-model';
import { reserveCall } from './ledger-call';
import { conversationWithCurrentToolTrace } from './message-compiler';
import { callModel, callUsage, llmConfigOptions } from './model-call';
import type { ModelDriverOptions } from './model-driver';
import {
  OBSERVATION_STOP,
  parseReActReply,
  type ReActToolDescription,
  reactCorrection,
  reactInstructions,
} from './react-protocol';

/** Metadata key of a final answer's message: the model's whole reply, shown to it in later prompts. */
export const REACT_TEXT_KEY = 'react_text';

export interface ReActDriverOptions extends ModelDriverOptions {
  /** The protocol text for the system prompt, from the tools. Default: `reactInstructions`. */
  readonly instructions?: (tools: readonly ReActToolDescription[]) => string;
}

/**
 * A driver for models without native tool calling: the ReAct text protocol (see
 * react-protocol.ts). The tools, with their descriptions and input JSON Schemas, are described in
 * the system prompt; the model's `Action:` / `Action Input:` reply becomes an ordinary tool call
 * that the loop's tools state runs; each tool result goes back as a user message
 * `Observation: <result>`; `Final Answer:` ends the run with that answer as the final response.
 *
 * A reply that cannot be parsed is an error step (`ReActParseError`) whose output tells the model
 * what was wrong, and the step asks the loop to go on, so the model can correct itself; the error
 * policy ends a run that keeps failing (3 error steps in a row: Failed, retry_limit_reached).
 *
 * Same options as the model driver (retries, `stream`, pricing). Text deltas, when streamed, are
 * the model's raw text, labels included. The state's JSON response format is not used: the reply
 * has to be protocol text.
 *
 * @example
 * const agent = createAgent({ driver: reactDriver(model), tools: { add } });
 * const done = await agent.execute(AgentState.empty().withUserMessage('What is 2 + 3?'));
 * done.finalResponse(); // '5', from "Final Answer: 5"
 */
export function reactDriver(languageModel: LanguageModel, options: ReActDriverOptions = {}): Driver {
  const model = callable(languageModel);
  const compile = options.compileMessages ?? conversationWithCurrentToolTrace;
  const instructions = options.instructions ?? reactInstructions;
  const instructionCache = new WeakMap<ToolSet, Promise<string>>();
  const instructionsFor = (tools: ToolSet) => {
    let cached = instructionCache.get(tools);
    if (!cached) {
      cached = describeTools(tools).then(instructions);
      instructionCache.set(tools, cached);
    }
    return cached;
  };
  return {
    name: `react:${model.provider}/${model.modelId}`,
    async infer(state, context) {
      const input = compile(state);
      const system = [state.systemPrompt(), await instructionsFor(context.tools)]
        .filter(Boolean)
        .join('\n\n');
      const callOptions = { ...options.callOptions, ...llmConfigOptions(state) };
      const call: CallOptions = {
        ...callOptions,
        stopSequences: [...(callOptions.stopSequences ?? []), OBSERVATION_STOP],
        prompt: toReActPrompt(system, input, model.specificationVersion),
        abortSignal: context.signal,
      };
      // the budget ledger's reservation of the call's worst case (see the model driver)
      const hold = context.ledger ? await reserveCall([model], call, state, context, options.pricing) : null;
      let result: Awaited<ReturnType<typeof callModel>>;
      try {
        result = await callModel(model, call, state, context, options);
      } catch (error) {
        await hold?.release();
        throw error;
      }
      const usage = callUsage(result, model, options.pricing);
      await hold?.settle(usage);
      const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
      return answer(state, input, text, result.finishReason.unified, usage);
    },
  };
}

/** The step for a reply: a tool call, a final answer, or a parse error the model is told about. */
function answer(
  state: AgentState,
  input: readonly Message[],
  text: string,
  finishReason: string,
  usage: ReturnType<typeof callUsage>,
): AgentState {
  const reply = parseReActReply(text);
  const step = (outputMessages: Message[], response: { text: string; toolCalls?: ToolCall[] }) =>
    AgentStep.of({
      inputMessages: input,
      outputMessages,
      inferenceResponse: InferenceResponse.of({ ...response, finishReason, usage }),
    });
  if (reply.type === 'action') {
    const call: ToolCall = Object.freeze({ id: `react_${newId()}`, name: reply.tool, args: reply.input });
    return state.withCurrentStep(step([Message.assistant(text, [call])], { text, toolCalls: [call] }));
  }
  if (reply.type === 'final') {
    // The conversation keeps the answer alone; the model is shown its whole reply (REACT_TEXT_KEY).
    const message = Message.of({
      role: 'assistant',
      content: reply.answer,
      metadata: { [REACT_TEXT_KEY]: text },
    });
    return state.withCurrentStep(step([message], { text: reply.answer }));
  }
  const error = AgentError.of(
    'ReActParseError',
    `The model's reply does not follow the ReAct format: ${reply.reason}`,
    'REACT_PARSE_ERROR',
    { reply: text },
  );
  const failed = step([Message.assistant(text), Message.user(reactCorrection(reply.reason))], { text });
  // An error step without tool calls would end the run; the model gets its chance to correct itself.
  return state.withCurrentStep(failed.withError(error)).withContinuationRequested();
}

async function describeTools(tools: ToolSet): Promise<ReActToolDescription[]> {
  return Promise.all(
    Object.entries(tools).map(async ([name, tool]) => ({
      name,
      description: toolDescription(tool),
      inputSchema: await inputJsonSchema(tool.inputSchema),
    })),
  );
}

/**
 * The conversation for a model without a tool role: tool results become user messages
 * `Observation: <result>`, and assistant messages are the model's own protocol text (tool calls
 * made through another driver are written out as `Action:` / `Action Input:` lines). A user
 * message's images and files go with it, in the form of the model's specification (`version`).
 *
 * @example
 * toReActPrompt('You add numbers.', state.messages());
 * // [{ role: 'system', ... }, { role: 'user', ... }, { role: 'assistant', content: [{ type: 'text',
 * //   text: 'Thought: ...\nAction: add\nAction Input: {"a":2,"b":3}' }] },
 * //  { role: 'user', content: [{ type: 'text', text: 'Observation: 5' }] }]
 */
export function toReActPrompt(
  systemPrompt: string,
  messages: readonly Message[],
  version: CallableModel['specificationVersion'] = 'v4',
): PromptMessage[] {
  const prompt: PromptMessage[] = [];
  if (systemPrompt) prompt.push({ role: 'system', content: systemPrompt });
  const text = (value: string) => [{ type: 'text' as const, text: value }];
  for (const m of messages) {
    if (m.role === 'system') prompt.push({ role: 'system', content: m.content });
    else if (m.role === 'user')
      prompt.push(m.parts ? toPromptMessage(m, version) : { role: 'user', content: text(m.content) });
    else if (m.role === 'tool') prompt.push({ role: 'user', content: text(`Observation: ${m.content}`) });
    else prompt.push({ role: 'assistant', content: text(assistantText(m)) });
  }
  return prompt;
}

function assistantText(m: Message): string {
  const raw = m.metadata[REACT_TEXT_KEY];
  if (typeof raw === 'string') return raw;
  // A reply of this driver already holds its Action lines; a native tool call has none.
  if (!m.toolCalls?.length || /^\s*action\s*:/im.test(m.content)) return m.content;
  const actions = m.toolCalls.map((c) => `Action: ${c.name}\nAction Input: ${JSON.stringify(c.args)}`);
  return [m.content, ...actions].filter(Boolean).join('\n');
}
