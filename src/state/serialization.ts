import type { z } from 'zod';
import { AgentContext, DEFAULT_SECTION, MessageStore, type ResponseFormat } from './agent-context';
import type { AgentError } from './agent-error';
import { AgentState, type AgentStateProps } from './agent-state';
import { AgentStep, InferenceResponse } from './agent-step';
import { AppendOnlyList } from './append-only-list';
import type { ApprovalRequest } from './approval';
import { InvalidStateError } from './errors';
import { ExecutionContinuation } from './execution-continuation';
import { ExecutionState } from './execution-state';
import { jsonValueProblem } from './json-value';
import { Message, type ToolCall } from './message';
import {
  type AgentStateJSON,
  type AgentStepJSON,
  type agentErrorSchema,
  agentStateSchema,
  agentStepSchema,
  type ContinuationJSON,
  continuationSchema,
  executionStateSchema,
  FORMAT_VERSION,
  type MessageJSON,
  type StoredExecutionStateJSON,
  type StoredStepJSON,
  stepExecutionSchema,
  type ToolExecutionJSON,
  toolExecutionSchema,
} from './schemas';
import { StepExecution } from './step-execution';
import { StopSignal } from './stop-signal';
import { ToolExecution } from './tool-execution';
import { Usage } from './usage';

// ---- validation --------------------------------------------------------------------------------

/** Parses `data` (an object or JSON text) with `schema`, or throws InvalidStateError with the path. */
export function validate<S extends z.ZodType>(schema: S, data: unknown, what: string): z.output<S> {
  let input = data;
  if (typeof data === 'string') {
    try {
      input = JSON.parse(data);
    } catch (error) {
      throw new InvalidStateError(
        '',
        `not valid JSON (truncated or corrupt): ${(error as Error).message}`,
        what,
        {
          cause: error,
        },
      );
    }
  }
  assertShape(input, what);
  const result = safeParse(schema, input, what);
  if (!result.success) {
    const issue = firstIssue(result.error.issues);
    throw new InvalidStateError(formatPath(issue.path), describeIssue(issue), what, { cause: result.error });
  }
  return result.data;
}

/**
 * How deep a whole document (a state, a trace) may nest: a state's own structure, subagent states
 * inside their calls, and values of MAX_VALUE_DEPTH inside those. Checked before the schema runs, so
 * the schema's recursion over the structure stays far from the stack's limit.
 */
export const MAX_DOCUMENT_DEPTH = 512;

/**
 * The schema's verdict. Within MAX_DOCUMENT_DEPTH its recursion needs a fraction of Node's stack;
 * called from a caller that has used up most of it, the overflow still answers as this library's error.
 */
function safeParse<S extends z.ZodType>(schema: S, input: unknown, what: string) {
  try {
    return schema.safeParse(input);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new InvalidStateError('', `too deeply nested to check here (${error.message})`, what, {
      cause: error,
    });
  }
}

function assertShape(input: unknown, what: string): void {
  const problem = jsonValueProblem(input, MAX_DOCUMENT_DEPTH, 'shape');
  if (problem) throw new InvalidStateError(formatPath(problem.path), problem.detail, what);
}

type Issue = z.core.$ZodIssue;

/** The first issue; inside a union, the branch that got furthest. */
function firstIssue(issues: readonly Issue[]): Issue {
  const issue = issues[0] as Issue;
  if (issue.code !== 'invalid_union' || issue.errors.length === 0) return issue;
  let best: Issue | undefined;
  for (const branch of issue.errors) {
    if (branch.length === 0) continue;
    const candidate = firstIssue(branch);
    if (!best || candidate.path.length > best.path.length) best = candidate;
  }
  if (!best || best.path.length === 0) return issue;
  return { ...best, path: [...issue.path, ...best.path] } as Issue;
}

function describeIssue(issue: Issue): string {
  if (issue.code === 'unrecognized_keys')
    return `unknown key(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
  if (issue.code === 'invalid_value')
    return `expected one of ${issue.values.map((v) => JSON.stringify(v)).join(' | ')}`;
  return issue.message;
}

export function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}

// ---- decoding parts ----------------------------------------------------------------------------

const ms = (iso: string) => Date.parse(iso);

function decodeMessage(json: MessageJSON): Message {
  return Message.of(json as Message);
}
function decodeToolCall(json: { id: string; name: string; args: unknown }): ToolCall {
  return Object.freeze({ id: json.id, name: json.name, args: json.args });
}
function decodeError(json: z.infer<typeof agentErrorSchema>): AgentError {
  return Object.freeze({ ...json, details: json.details === null ? null : Object.freeze(json.details) });
}
function decodeContinuation(json: ContinuationJSON): ExecutionContinuation {
  const signals = json.stopSignals.map((s) => StopSignal.of(s.reason, s.message, s.context, s.source));
  return ExecutionContinuation.of(signals, json.continuationRequested);
}
function decodeToolExecution(json: ToolExecutionJSON): ToolExecution {
  return ToolExecution.fromProps({
    id: json.id,
    toolCall: decodeToolCall(json.toolCall),
    value: json.value,
    error: json.error === null ? null : decodeError(json.error),
    blocked: json.blocked,
    startedAt: ms(json.startedAt),
    completedAt: ms(json.completedAt),
    usage: Usage.of(json.usage),
    childState: json.childState === null ? null : buildAgentState(json.childState as AgentStateJSON),
  });
}
function decodeStep(
  json: AgentStepJSON | StoredStepJSON,
  inputMessages: readonly Message[] | AppendOnlyList<Message>,
): AgentStep {
  const response = json.inferenceResponse;
  return AgentStep.of({
    id: json.id,
    inputMessages,
    outputMessages: json.outputMessages.map(decodeMessage),
    inferenceResponse: InferenceResponse.of({
      text: response.text,
      toolCalls: response.toolCalls.map(decodeToolCall),
      finishReason: response.finishReason,
      usage: Usage.of(response.usage),
      model: response.model,
    }),
    toolExecutions: json.toolExecutions.map(decodeToolExecution),
    errors: json.errors.map(decodeError),
    structuredOutput: json.structuredOutput,
  });
}

type StepInputs = (step: StoredStepJSON, path: string) => readonly Message[] | AppendOnlyList<Message>;

function decodeExecution(json: StoredExecutionStateJSON, inputs: StepInputs): ExecutionState {
  const steps = json.stepExecutions.map((s, i) =>
    StepExecution.of(
      decodeStep(s.step, inputs(s.step, `execution.stepExecutions[${i}].step.inputMessages`)),
      decodeContinuation(s.continuation),
      ms(s.startedAt),
      ms(s.completedAt),
    ),
  );
  return ExecutionState.restore({
    executionId: json.executionId,
    status: json.status,
    startedAt: ms(json.startedAt),
    completedAt: json.completedAt === null ? null : ms(json.completedAt),
    stepExecutions: AppendOnlyList.of(steps),
    continuation: decodeContinuation(json.continuation),
    errors: json.errors.map(decodeError),
    ...decodeApproval(json.awaitingApproval, inputs),
  });
}

function decodeApproval(json: StoredExecutionStateJSON['awaitingApproval'], inputs: StepInputs) {
  if (json === null) return { currentStep: null, currentStepStartedAt: null, approval: null };
  return {
    currentStep: decodeStep(json.step, inputs(json.step, 'execution.awaitingApproval.step.inputMessages')),
    currentStepStartedAt: ms(json.startedAt),
    approval: Object.freeze({
      requestedAt: ms(json.requestedAt),
      toolCallIds: Object.freeze([...json.toolCallIds]),
      decisions: Object.freeze({ ...json.decisions }) as ApprovalRequest['decisions'],
      children: Object.freeze(
        Object.fromEntries(
          Object.entries(json.children ?? {}).map(([id, child]) => [
            id,
            buildAgentState(child as AgentStateJSON),
          ]),
        ),
      ),
      signatures: Object.freeze({ ...json.signatures }),
    }),
  };
}

const inlineInputs = (step: StoredStepJSON) => (step.inputMessages as MessageJSON[]).map(decodeMessage);

export const decodePart = {
  toolExecution: (data: unknown) => decodeToolExecution(validate(toolExecutionSchema, data, 'ToolExecution')),
  agentStep: (data: unknown) => {
    const json = validate(agentStepSchema, data, 'AgentStep');
    return decodeStep(json, json.inputMessages.map(decodeMessage));
  },
  stepExecution: (data: unknown) => {
    const json = validate(stepExecutionSchema, data, 'StepExecution');
    return StepExecution.of(
      decodeStep(json.step, json.step.inputMessages.map(decodeMessage)),
      decodeContinuation(json.continuation),
      ms(json.startedAt),
      ms(json.completedAt),
    );
  },
  continuation: (data: unknown) =>
    decodeContinuation(validate(continuationSchema, data, 'ExecutionContinuation')),
  executionState: (data: unknown) =>
    decodeExecution(validate(executionStateSchema, data, 'ExecutionState'), inlineInputs),
};

// ---- AgentState --------------------------------------------------------------------------------

export function decodeAgentState(data: unknown): AgentState {
  return buildAgentState(validate(agentStateSchema, data, 'AgentState'));
}

/** Builds a state from an already validated document. */
function buildAgentState(json: AgentStateJSON): AgentState {
  const sections: Record<string, readonly Message[]> = {};
  for (const [name, messages] of Object.entries(json.context.messages))
    sections[name] = messages.map(decodeMessage);
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
        out.push(decodeMessage(item));
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

  return AgentState.restore({
    agentId: json.agentId,
    parentAgentId: json.parentAgentId,
    createdAt: ms(json.createdAt),
    updatedAt: ms(json.updatedAt),
    executionCount: json.executionCount,
    llmConfig: json.llmConfig === null ? null : Object.freeze(json.llmConfig),
    context: AgentContext.of({
      store,
      metadata: json.context.metadata,
      systemPrompt: json.context.systemPrompt,
      responseFormat: json.context.responseFormat as ResponseFormat,
    }),
    execution: json.execution === null ? null : decodeExecution(json.execution, inputs),
  });
}

export function encodeAgentState(props: AgentStateProps) {
  const context = props.context;
  const conversation = context.store().list(DEFAULT_SECTION);
  let indexOf: Map<Message, number> | undefined;
  const encodeInputs = (list: AppendOnlyList<Message>) => {
    if (list.size === 0) return [];
    if (list.isPrefixOf(conversation)) return [{ $ref: [0, list.size] as [number, number] }];
    const messages = list.toArray();
    if (!indexOf) {
      indexOf = new Map();
      let i = 0;
      for (const message of conversation) indexOf.set(message, i++);
    }
    const out: Array<Message | { $ref: [number, number] }> = [];
    let run: [number, number] | null = null;
    for (const message of messages) {
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
  return {
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
        : execution.serialize((step) => ({
            ...step.toJSON(),
            inputMessages: encodeInputs(step.inputMessageList()),
          })),
  };
}
