import { type AgentError, decodeAgentError } from './agent-error';
import { AgentStepType } from './agent-step-type';
import { AppendOnlyList } from './append-only-list';
import { InvalidArgumentError } from './errors';
import { frozenList } from './frozen-list';
import { newId } from './ids';
import {
  decodeMessage,
  decodeToolCall,
  type Message,
  type MessageDecoder,
  type ProviderMetadata,
  type ToolCall,
} from './message';
import { type AgentStepJSON, agentStepSchema, type StoredStepJSON } from './schemas';
import { ToolExecution } from './tool-execution';
import { Usage } from './usage';
import { validate } from './validation';

/** What the model answered in one step. */
export interface InferenceResponse {
  readonly text: string;
  readonly toolCalls: readonly ToolCall[];
  readonly finishReason: string | null;
  readonly usage: Usage;
  /** The id of the model that answered (`model.modelId`), when the driver knows it. */
  readonly model?: string;
  /** The provider's own finish reason (`'tool_calls'`), kept when it is not the unified one. */
  readonly rawFinishReason?: string;
  /** What the provider returned about the call as a whole (not about a part), when it returned any. */
  readonly providerMetadata?: ProviderMetadata;
}

/**
 * Digests of what a step sent besides its messages (the system prompt, the tools offered, the
 * settings), recorded by the model driver so a replay can tell a changed request from the recorded
 * one (see `replayDriver`); short hashes, not the text.
 */
export interface StepRequest {
  readonly system: string;
  readonly tools: string;
  readonly settings: string;
}

export const InferenceResponse = {
  empty(): InferenceResponse {
    return Object.freeze({
      text: '',
      toolCalls: frozenList<ToolCall>([]),
      finishReason: null,
      usage: Usage.zero,
    });
  },
  of(partial: Partial<InferenceResponse>): InferenceResponse {
    if (partial.text !== undefined && typeof partial.text !== 'string')
      throw new InvalidArgumentError('inferenceResponse.text', `${typeof partial.text} is not a string`);
    return Object.freeze({
      text: partial.text ?? '',
      toolCalls: frozenList(partial.toolCalls),
      finishReason: partial.finishReason ?? null,
      usage: partial.usage ?? Usage.zero,
      ...(partial.model !== undefined && { model: partial.model }),
      ...(partial.rawFinishReason !== undefined && { rawFinishReason: partial.rawFinishReason }),
      ...(partial.providerMetadata !== undefined && { providerMetadata: partial.providerMetadata }),
    });
  },
};

interface AgentStepProps {
  readonly id: string;
  readonly inputMessages: AppendOnlyList<Message>;
  readonly outputMessages: readonly Message[];
  readonly inferenceResponse: InferenceResponse;
  readonly toolExecutions: readonly ToolExecution[];
  readonly errors: readonly AgentError[];
  /** The final answer parsed and validated against the agent's response format; null otherwise. */
  readonly structuredOutput: unknown;
  /** What the step sent besides its messages, as digests; null when the driver did not record it. */
  readonly request: StepRequest | null;
}

type StepInit = Omit<AgentStepProps, 'inputMessages' | 'request'> & {
  readonly request: StepRequest | null | undefined;
  readonly inputMessages: readonly Message[] | AppendOnlyList<Message>;
};

function toList(messages: readonly Message[] | AppendOnlyList<Message> | undefined): AppendOnlyList<Message> {
  if (messages === undefined) return AppendOnlyList.empty();
  return messages instanceof AppendOnlyList ? messages : AppendOnlyList.of(messages);
}

/** One iteration of the loop: what went to the model, what came back, the tools run and the errors. */
export class AgentStep {
  static fromJSON(data: unknown): AgentStep {
    const json = validate(agentStepSchema, data, 'AgentStep');
    return AgentStep.fromParsed(json, json.inputMessages.map(decodeMessage));
  }

  /**
   * @internal from a validated document, or the part of one that holds it, with its input messages
   * given (inside a state they are read from the stored conversation)
   */
  static fromParsed(
    json: AgentStepJSON | StoredStepJSON,
    inputMessages: readonly Message[] | AppendOnlyList<Message>,
    decode: MessageDecoder = decodeMessage,
  ): AgentStep {
    const response = json.inferenceResponse;
    return AgentStep.of({
      id: json.id,
      inputMessages,
      outputMessages: json.outputMessages.map(decode),
      inferenceResponse: InferenceResponse.of({
        text: response.text,
        toolCalls: response.toolCalls.map(decodeToolCall),
        finishReason: response.finishReason,
        usage: Usage.of(response.usage),
        model: response.model,
        rawFinishReason: response.rawFinishReason,
        providerMetadata: response.providerMetadata as ProviderMetadata | undefined,
      }),
      toolExecutions: json.toolExecutions.map(ToolExecution.fromParsed),
      errors: json.errors.map(decodeAgentError),
      structuredOutput: json.structuredOutput,
      request: json.request,
    });
  }

  private constructor(private readonly props: AgentStepProps) {}

  /**
   * `inputMessages` may be the state's message list (`state.messageList()`): it is then shared,
   * not copied, so recording what the model saw costs nothing per step.
   */
  static of(props: Partial<StepInit> = {}): AgentStep {
    return new AgentStep({
      id: props.id ?? newId(),
      inputMessages: toList(props.inputMessages),
      outputMessages: frozenList(props.outputMessages),
      inferenceResponse: props.inferenceResponse ?? InferenceResponse.empty(),
      toolExecutions: frozenList(props.toolExecutions),
      errors: frozenList(props.errors),
      structuredOutput: props.structuredOutput ?? null,
      request: props.request ?? null,
    });
  }

  id(): string {
    return this.props.id;
  }
  inputMessages(): readonly Message[] {
    return this.props.inputMessages.toArray();
  }
  inputMessageList(): AppendOnlyList<Message> {
    return this.props.inputMessages;
  }
  outputMessages(): readonly Message[] {
    return this.props.outputMessages;
  }
  inferenceResponse(): InferenceResponse {
    return this.props.inferenceResponse;
  }
  toolExecutions(): readonly ToolExecution[] {
    return this.props.toolExecutions;
  }
  /** The tool calls the model asked for. */
  requestedToolCalls(): readonly ToolCall[] {
    return this.props.inferenceResponse.toolCalls;
  }
  /** The tool calls that actually ran (blocked calls excluded). */
  executedToolCalls(): readonly ToolCall[] {
    return this.props.toolExecutions.filter((e) => !e.wasBlocked()).map((e) => e.toolCall());
  }
  hasToolCalls(): boolean {
    return this.props.inferenceResponse.toolCalls.length > 0;
  }
  finishReason(): string | null {
    return this.props.inferenceResponse.finishReason;
  }
  /** The id of the model that answered this step (with `fallbackModels`, the one that took over); null if unknown. */
  model(): string | null {
    return this.props.inferenceResponse.model ?? null;
  }
  outputText(): string {
    return this.props.inferenceResponse.text;
  }
  structuredOutput(): unknown {
    return this.props.structuredOutput;
  }
  /** Digests of the system prompt, tools and settings the step was sent with; null if not recorded. */
  request(): StepRequest | null {
    return this.props.request;
  }
  /** Errors of the step itself and of its tool executions. */
  errors(): readonly AgentError[] {
    const toolErrors = this.props.toolExecutions.flatMap((e) => {
      const error = e.error();
      return error ? [error] : [];
    });
    return toolErrors.length ? [...this.props.errors, ...toolErrors] : this.props.errors;
  }
  /** Errors recorded on the step itself, without those of tool executions. */
  stepErrors(): readonly AgentError[] {
    return this.props.errors;
  }
  hasErrors(): boolean {
    return this.props.errors.length > 0 || this.props.toolExecutions.some((e) => e.hasError());
  }
  stepType(): AgentStepType {
    if (this.hasErrors()) return AgentStepType.Error;
    if (this.hasToolCalls()) return AgentStepType.ToolExecution;
    return AgentStepType.FinalResponse;
  }
  /** The model call's usage plus whatever tool executions spent (subagents). */
  usage(): Usage {
    let usage = this.props.inferenceResponse.usage;
    for (const execution of this.props.toolExecutions) usage = Usage.add(usage, execution.usage());
    return usage;
  }

  withInputMessages(messages: readonly Message[] | AppendOnlyList<Message>): AgentStep {
    return new AgentStep({ ...this.props, inputMessages: toList(messages) });
  }
  withOutputMessages(messages: readonly Message[]): AgentStep {
    return new AgentStep({ ...this.props, outputMessages: Object.freeze([...messages]) });
  }
  withInferenceResponse(response: InferenceResponse): AgentStep {
    return new AgentStep({ ...this.props, inferenceResponse: response });
  }
  withToolExecutions(executions: readonly ToolExecution[]): AgentStep {
    return new AgentStep({ ...this.props, toolExecutions: Object.freeze([...executions]) });
  }
  withStructuredOutput(value: unknown): AgentStep {
    return new AgentStep({ ...this.props, structuredOutput: value ?? null });
  }
  withRequest(request: StepRequest | null): AgentStep {
    return new AgentStep({ ...this.props, request });
  }
  withError(error: AgentError): AgentStep {
    return new AgentStep({ ...this.props, errors: Object.freeze([...this.props.errors, error]) });
  }

  toJSON() {
    return this.serialize(
      this.props.inputMessages.toArray(),
      (m) => m,
      (e) => e.toJSON(),
    );
  }

  /**
   * @internal the serialized form with its input messages given and each output message and tool
   * execution written by `message` and `toolExecution`: the one encoder of a step's fields, for
   * `toJSON` and the journal alike (a field added here reaches every store).
   */
  serialize<I, M, E>(
    inputMessages: I,
    message: (message: Message) => M,
    toolExecution: (execution: ToolExecution) => E,
  ) {
    const p = this.props;
    return {
      id: p.id,
      inputMessages,
      outputMessages: p.outputMessages.map(message),
      inferenceResponse: p.inferenceResponse,
      toolExecutions: p.toolExecutions.map(toolExecution),
      errors: p.errors,
      structuredOutput: p.structuredOutput,
      ...(p.request !== null && { request: p.request }),
    };
  }
}
