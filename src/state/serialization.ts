import { AgentContext, DEFAULT_SECTION, MessageStore, type ResponseFormat } from './agent-context';
import type { AgentStateProps } from './agent-state-props';
import type { AppendOnlyList } from './append-only-list';
import { InvalidStateError } from './errors';
import { ExecutionState, type StepInputs } from './execution-state';
import { setOwn } from './json-value';
import { decodeMessage, type Message, type MessageDecoder } from './message';
import { type AgentStateJSON, FORMAT_VERSION } from './schemas';

// An AgentState's document: its fields written as JSON, with each step's input messages written as
// references into the stored conversation (`$ref`), and read back. It deals in the state's fields,
// not the class: agent-state.ts imports this file and wraps what it reads.

/** A state's fields from its validated document, its messages made by `decode`. */
export function decodeAgentStateProps(
  json: AgentStateJSON,
  decode: MessageDecoder = decodeMessage,
): AgentStateProps {
  const sections: Record<string, readonly Message[]> = {};
  for (const [name, messages] of Object.entries(json.context.messages))
    setOwn(sections, name, messages.map(decode));
  const store = MessageStore.of(sections);
  const conversation = store.section(DEFAULT_SECTION);
  const conversationList = store.list(DEFAULT_SECTION);

  const inputs: StepInputs = (step, path) => {
    const only = step.inputMessages.length === 1 ? step.inputMessages[0] : undefined;
    if (only && '$ref' in only && only.$ref[0] === 0 && only.$ref[1] <= conversation.length) {
      return conversationList.prefix(only.$ref[1]);
    }
    const out: Message[] = [];
    step.inputMessages.forEach((item, index) => {
      if (!('$ref' in item)) {
        out.push(decode(item));
        return;
      }
      const [from, to] = item.$ref;
      if (from > to || to > conversation.length) {
        throw new InvalidStateError(
          `${path}[${index}].$ref`,
          `range [${from}, ${to}) is outside the ${conversation.length} stored messages`,
        );
      }
      for (let i = from; i < to; i++) out.push(conversation[i] as Message);
    });
    return out;
  };

  return {
    agentId: json.agentId,
    parentAgentId: json.parentAgentId,
    createdAt: Date.parse(json.createdAt),
    updatedAt: Date.parse(json.updatedAt),
    executionCount: json.executionCount,
    llmConfig: json.llmConfig === null ? null : Object.freeze(json.llmConfig),
    context: AgentContext.of({
      store,
      metadata: json.context.metadata,
      systemPrompt: json.context.systemPrompt,
      responseFormat: json.context.responseFormat as ResponseFormat,
    }),
    execution: json.execution === null ? null : ExecutionState.fromParsed(json.execution, inputs, decode),
    agentVersion: json.agentVersion ?? null,
  };
}

/** A state's document, as `toJSON()` returns it. */
export function encodeAgentState(props: AgentStateProps) {
  const context = props.context;
  const conversation = context.store().list(DEFAULT_SECTION);
  let indexOf: Map<Message, number> | undefined;
  const encodeInputs = (list: AppendOnlyList<Message>) => {
    if (list.size === 0) return [];
    if (list.isPrefixOf(conversation)) return [{ $ref: [0, list.size] as [number, number] }];
    if (!indexOf) {
      indexOf = new Map();
      let i = 0;
      for (const message of conversation) indexOf.set(message, i++);
    }
    const out: Array<Message | { $ref: [number, number] }> = [];
    let run: [number, number] | null = null;
    // iterated, not `toArray()`: that keeps a copy of the list in it, one per step over a long run
    for (const message of list) {
      const index = indexOf.get(message);
      if (index === undefined) {
        run = null;
        out.push(message);
      } else if (run && run[1] === index) {
        run[1] = index + 1;
      } else {
        run = [index, index + 1];
        out.push({ $ref: run });
      }
    }
    return out;
  };
  const execution = props.execution;
  const document = {
    formatVersion: FORMAT_VERSION,
    agentId: props.agentId,
    parentAgentId: props.parentAgentId,
    createdAt: new Date(props.createdAt).toISOString(),
    updatedAt: new Date(props.updatedAt).toISOString(),
    executionCount: props.executionCount,
    llmConfig: props.llmConfig,
    context: context.toJSON(),
    execution:
      execution === null
        ? null
        : execution.serialize((step) =>
            step.serialize(
              encodeInputs(step.inputMessageList()),
              (m) => m,
              (e) => e.toJSON(),
            ),
          ),
  };
  // written only when there is one: a state of an agent without a version reads as before
  return props.agentVersion ? Object.assign(document, { agentVersion: props.agentVersion }) : document;
}
