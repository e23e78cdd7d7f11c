import { executionStatuses } from './execution-status';
import { isRecord, MAX_VALUE_DEPTH } from './json-value';
import { type AgentStateJSON, FORMAT_VERSION, timestampPattern } from './schemas';
import { stopReasons } from './stop-reason';

// agentStateSchema's verdict on a well-formed document, without zod: a load spent about a third of
// its time in the schema, which builds a copy of every object it checks. This walks the document
// once, allocating nothing, and says true only where the schema accepts it and its output would equal
// the input; false sends the caller to the schema, which accepts or names the bad field's path. It
// mirrors schemas.ts rule for rule (tests/property/state-document-check.test.ts holds them together):
// a change to the schema is a change here.

/** Whether agentStateSchema accepts `value` as it is (see above); false means "ask the schema". */
export function isAgentStateDocument(value: unknown): value is AgentStateJSON {
  try {
    return agentState(value);
  } catch (error) {
    // Subagent states nested past the stack: the schema's own walk answers for them.
    if (error instanceof RangeError) return false;
    throw error;
  }
}

type Checker = (value: unknown) => boolean;
type Fields = Readonly<Record<string, Checker>>;

/**
 * An object JSON.parse makes. The schema copies a record's entries into a plain object (a Date or a
 * class instance comes out as `{}` or its own keys), so any other is left to it.
 */
const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (!isRecord(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};
const isString = (value: unknown): value is string => typeof value === 'string';
const isNonEmpty = (value: unknown) => typeof value === 'string' && value.length > 0;
const isBoolean = (value: unknown) => typeof value === 'boolean';
const isTrue = (value: unknown) => value === true;
const isTimestamp = (value: unknown) => typeof value === 'string' && timestampPattern.test(value);
const isCount = (value: unknown) => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
const isAmount = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0;
const orNull =
  (check: Checker): Checker =>
  (value) =>
    value === null || check(value);
const arrayOf =
  (check: Checker): Checker =>
  (value) => {
    if (!Array.isArray(value)) return false;
    for (let i = 0; i < value.length; i++) if (!check(value[i])) return false;
    return true;
  };
const oneOf = (values: readonly string[]): Checker => {
  const set = new Set(values);
  return (value) => typeof value === 'string' && set.has(value);
};

/**
 * A strict object: every key one of `required` (present, checked) or `optional` (checked when not
 * undefined), keys counted as zod counts them (`for...in`: inherited enumerable keys are unknown).
 */
function strict(required: Fields, optional: Fields = {}): Checker {
  const requiredKeys = Object.keys(required);
  const requiredChecks = Object.values(required);
  const optionalKeys = Object.keys(optional);
  const optionalChecks = Object.values(optional);
  const known = new Set([...requiredKeys, ...optionalKeys]);
  return (value) => {
    if (!isRecord(value)) return false;
    for (let i = 0; i < requiredKeys.length; i++)
      if (!(requiredChecks[i] as Checker)(value[requiredKeys[i] as string])) return false;
    for (let i = 0; i < optionalKeys.length; i++) {
      const item = value[optionalKeys[i] as string];
      if (item !== undefined && !(optionalChecks[i] as Checker)(item)) return false;
    }
    for (const key in value) if (!known.has(key)) return false;
    return true;
  };
}

/** What jsonValueSchema accepts: JSON data within MAX_VALUE_DEPTH (a cycle runs out of depth). */
function isJsonValue(value: unknown, depth = 0): boolean {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(value);
    case 'object': {
      if (value === null) return true;
      if (depth >= MAX_VALUE_DEPTH) return false;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (!isJsonValue(value[i], depth + 1)) return false;
        return true;
      }
      if (!isPlainObject(value)) return false;
      for (const key of Object.keys(value)) if (!isJsonValue(value[key], depth + 1)) return false;
      return true;
    }
    default:
      return false;
  }
}
const isJsonRecord = (value: unknown) => isRecord(value) && isJsonValue(value);

/** namedRecord's check: an object of `check`ed values (its own keys; `__proto__` stays data). */
const namedRecord =
  (check: Checker): Checker =>
  (value) => {
    if (!isPlainObject(value)) return false;
    for (const key of Object.keys(value)) if (!check(value[key])) return false;
    return true;
  };
/**
 * z.record(z.string(), …): its output drops a `__proto__` key, so a record holding one is left to
 * the schema; inherited keys are not its (it reads own keys).
 */
const record =
  (check: Checker): Checker =>
  (value) => {
    if (!isPlainObject(value) || Object.hasOwn(value, '__proto__')) return false;
    for (const key of Object.keys(value)) if (!check(value[key])) return false;
    return true;
  };

const providerMetadata = namedRecord(isJsonRecord);

// The hot shapes (a load checks each once a step, or once a message) are written out: named reads
// keep V8's property caches monomorphic, where `strict` reads every field through a variable key.

/** No key but `keys`, as zod counts them (`for...in`: an inherited enumerable key is unknown too). */
function onlyKeys(value: Record<string, unknown>, keys: ReadonlySet<string>): boolean {
  for (const key in value) if (!keys.has(key)) return false;
  return true;
}

const usageKeys = new Set(['inputTokens', 'outputTokens', 'totalTokens', 'cost']);
const usage: Checker = (value) =>
  isRecord(value) &&
  isAmount(value.inputTokens) &&
  isAmount(value.outputTokens) &&
  isAmount(value.totalTokens) &&
  isAmount(value.cost) &&
  onlyKeys(value, usageKeys);
const agentError = strict({
  name: isString,
  message: isString,
  code: orNull(isString),
  details: orNull(isJsonRecord),
});
const toolCallKeys = new Set(['id', 'name', 'args', 'providerMetadata']);
const toolCall: Checker = (value) =>
  isRecord(value) &&
  typeof value.id === 'string' &&
  typeof value.name === 'string' &&
  isJsonValue(value.args) &&
  (value.providerMetadata === undefined || providerMetadata(value.providerMetadata)) &&
  onlyKeys(value, toolCallKeys);
const toolCalls = arrayOf(toolCall);

const partMetadata = { providerMetadata };
const contentParts: Readonly<Record<string, Checker>> = {
  text: strict({ type: isString, text: isString }, partMetadata),
  reasoning: strict({ type: isString, text: isString }, partMetadata),
  file: strict(
    { type: isString, mediaType: isString, data: isString },
    { filename: isString, ...partMetadata },
  ),
  'tool-call': strict(
    { type: isString, toolCallId: isString, toolName: isString, input: isJsonValue },
    { providerExecuted: isBoolean, ...partMetadata },
  ),
  'tool-result': strict(
    { type: isString, toolCallId: isString, toolName: isString, output: isJsonValue },
    { isError: isBoolean, ...partMetadata },
  ),
};
const contentPart: Checker = (value) => {
  if (!isRecord(value)) return false;
  const type = value.type;
  return (
    typeof type === 'string' && Object.hasOwn(contentParts, type) && (contentParts[type] as Checker)(value)
  );
};

const messageKeys = new Set([
  'role',
  'content',
  'toolCalls',
  'toolCallId',
  'toolName',
  'isError',
  'parts',
  'providerMetadata',
  'metadata',
]);
const isRole = oneOf(['system', 'user', 'assistant', 'tool']);
const contentPartList = arrayOf(contentPart);
const message: Checker = (value) =>
  isRecord(value) &&
  isRole(value.role) &&
  typeof value.content === 'string' &&
  isJsonRecord(value.metadata) &&
  (value.toolCalls === undefined || toolCalls(value.toolCalls)) &&
  (value.toolCallId === undefined || typeof value.toolCallId === 'string') &&
  (value.toolName === undefined || typeof value.toolName === 'string') &&
  (value.isError === undefined || typeof value.isError === 'boolean') &&
  (value.parts === undefined || contentPartList(value.parts)) &&
  (value.providerMetadata === undefined || providerMetadata(value.providerMetadata)) &&
  onlyKeys(value, messageKeys);
const messages = arrayOf(message);
const refKeys = new Set(['$ref']);
const messageRef: Checker = (value) => {
  if (!isRecord(value)) return false;
  const range = value.$ref;
  return (
    Array.isArray(range) &&
    range.length === 2 &&
    isCount(range[0]) &&
    isCount(range[1]) &&
    onlyKeys(value, refKeys)
  );
};
const storedInput: Checker = (value) => messageRef(value) || message(value);

const stopSignal = strict({
  reason: oneOf(stopReasons),
  message: isString,
  context: isJsonRecord,
  source: isString,
});
const continuation = strict({ stopSignals: arrayOf(stopSignal), continuationRequested: isBoolean });

const toolExecutionKeys = new Set([
  'id',
  'toolCall',
  'value',
  'error',
  'blocked',
  'startedAt',
  'completedAt',
  'usage',
  'childState',
  'resolution',
]);
const isResolution = oneOf(['approved', 'rejected', 'completed', 'reconciled']);
const toolExecution: Checker = (value) =>
  isRecord(value) &&
  isNonEmpty(value.id) &&
  toolCall(value.toolCall) &&
  isJsonValue(value.value) &&
  (value.error === null || agentError(value.error)) &&
  typeof value.blocked === 'boolean' &&
  isTimestamp(value.startedAt) &&
  isTimestamp(value.completedAt) &&
  usage(value.usage) &&
  (value.childState === null || agentState(value.childState)) &&
  (value.resolution === undefined || isResolution(value.resolution)) &&
  onlyKeys(value, toolExecutionKeys);
const toolExecutions = arrayOf(toolExecution);
const agentErrors = arrayOf(agentError);

const inferenceResponse = strict(
  { text: isString, toolCalls, finishReason: orNull(isString), usage },
  { model: isString, rawFinishReason: isString, providerMetadata },
);
const stepRequest = strict({ system: isString, tools: isString, settings: isString });

const storedInputs = arrayOf(storedInput);
const stepKeys = new Set([
  'id',
  'inputMessages',
  'outputMessages',
  'inferenceResponse',
  'toolExecutions',
  'errors',
  'structuredOutput',
  'request',
]);
const storedStep: Checker = (value) =>
  isRecord(value) &&
  isNonEmpty(value.id) &&
  storedInputs(value.inputMessages) &&
  messages(value.outputMessages) &&
  inferenceResponse(value.inferenceResponse) &&
  toolExecutions(value.toolExecutions) &&
  agentErrors(value.errors) &&
  isJsonValue(value.structuredOutput) &&
  (value.request === undefined || stepRequest(value.request)) &&
  onlyKeys(value, stepKeys);
const stepExecutionKeys = new Set(['continuation', 'startedAt', 'completedAt', 'step']);
const storedStepExecution: Checker = (value) =>
  isRecord(value) &&
  continuation(value.continuation) &&
  isTimestamp(value.startedAt) &&
  isTimestamp(value.completedAt) &&
  storedStep(value.step) &&
  onlyKeys(value, stepExecutionKeys);

const approvalDecisions: Readonly<Record<string, Checker>> = {
  approve: strict({ type: isString }, { reconciled: isTrue }),
  reject: strict({ type: isString }, { reason: isString }),
  edit: strict({ type: isString, args: isJsonValue }),
  complete: strict({ type: isString, result: isJsonValue }, { reconciled: isTrue }),
};
const approvalDecision: Checker = (value) => {
  if (!isRecord(value)) return false;
  const type = value.type;
  return (
    typeof type === 'string' &&
    Object.hasOwn(approvalDecisions, type) &&
    (approvalDecisions[type] as Checker)(value)
  );
};
const callIds = arrayOf(isNonEmpty);
const awaitingApproval = strict(
  {
    startedAt: isTimestamp,
    requestedAt: isTimestamp,
    toolCallIds: callIds,
    decisions: record(approvalDecision),
    step: storedStep,
  },
  {
    children: record((value) => agentState(value)),
    signatures: record(isString),
    interrupted: callIds,
    started: callIds,
  },
);

const execution = strict({
  executionId: isNonEmpty,
  status: oneOf(executionStatuses),
  startedAt: isTimestamp,
  completedAt: orNull(isTimestamp),
  continuation,
  errors: arrayOf(agentError),
  stepExecutions: arrayOf(storedStepExecution),
  awaitingApproval: orNull(awaitingApproval),
});

const textFormat = strict({ type: isString });
const jsonFormat = strict({ type: isString }, { schema: isJsonRecord, name: isString });
const responseFormat: Checker = (value) =>
  isRecord(value) && (value.type === 'text' ? textFormat(value) : value.type === 'json' && jsonFormat(value));

const context = strict({
  messages: namedRecord(messages),
  metadata: isJsonRecord,
  systemPrompt: isString,
  responseFormat,
});

const agentState: Checker = (value) => stateFields(value);
const stateFields = strict(
  {
    formatVersion: (value) => value === FORMAT_VERSION,
    agentId: isNonEmpty,
    parentAgentId: orNull(isNonEmpty),
    createdAt: isTimestamp,
    updatedAt: isTimestamp,
    executionCount: isCount,
    llmConfig: orNull(isJsonRecord),
    context,
    execution: orNull(execution),
  },
  { agentVersion: isNonEmpty },
);
