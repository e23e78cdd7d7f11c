import { z } from 'zod';
import { executionStatuses } from './execution-status';
import { isRecord, jsonValueProblem, setOwn } from './json-value';
import { stopReasons } from './stop-reason';

/**
 * Any JSON value, at most MAX_VALUE_DEPTH levels deep. Checked by one iterative walk (no zod
 * recursion per nesting level) and passed through as it is, so an own `__proto__` key stays data.
 */
export const jsonValueSchema: z.ZodType<unknown> = z.unknown().check((ctx) => {
  const problem = jsonValueProblem(ctx.value);
  if (problem)
    ctx.issues.push({ code: 'custom', message: problem.detail, input: ctx.value, path: problem.path });
});
/** A JSON object (not an array), checked as jsonValueSchema is. */
const jsonRecordSchema: z.ZodType<Record<string, unknown>> = z
  .custom<Record<string, unknown>>(isRecord, {
    message: 'expected an object',
  })
  .check((ctx) => {
    const problem = jsonValueProblem(ctx.value);
    if (problem)
      ctx.issues.push({ code: 'custom', message: problem.detail, input: ctx.value, path: problem.path });
  });

const timestamp = z.iso.datetime({ offset: true });
/** The pattern `timestamp` checks with (for the schema's zod-free twin, state-document-check.ts). */
export const timestampPattern: RegExp = timestamp._zod.def.pattern as RegExp;
const count = z.number().int().nonnegative();
const amount = z.number().finite().nonnegative();

export const usageSchema = z.strictObject({
  inputTokens: amount,
  outputTokens: amount,
  totalTokens: amount,
  cost: amount,
});

const agentErrorSchema = z.strictObject({
  name: z.string(),
  message: z.string(),
  code: z.string().nullable(),
  details: jsonRecordSchema.nullable(),
});

/**
 * An object of `value`s by name, checked name by name into a copy whose keys are set as data: zod's
 * record would drop a key named `__proto__` (its key sets the copy's prototype).
 */
function namedRecord<T>(value: z.ZodType<T>, message: string) {
  return z.custom<Record<string, unknown>>(isRecord, { message }).transform((record, ctx) => {
    const out: Record<string, T> = {};
    for (const name of Object.keys(record)) {
      const parsed = value.safeParse(record[name]);
      if (parsed.success) setOwn(out, name, parsed.data);
      else
        for (const issue of parsed.error.issues)
          ctx.issues.push({
            code: 'custom',
            message: issue.message,
            input: record[name],
            path: [name, ...issue.path],
          });
    }
    return out;
  });
}

/** Provider-specific data by provider name (a reasoning signature, a cache hint, ...). */
export const providerMetadataSchema = namedRecord(
  jsonRecordSchema,
  'expected an object of options by provider',
);

const toolCallSchema = z.strictObject({
  id: z.string(),
  name: z.string(),
  args: jsonValueSchema,
  providerMetadata: providerMetadataSchema.optional(),
});

const partMetadata = { providerMetadata: providerMetadataSchema.optional() };
/**
 * One part of a message's content, as the AI SDK's ModelMessage has them. File data is base64 text
 * or a URL (`https://...`, `data:...`), so that a state stays JSON.
 */
export const contentPartSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text'), text: z.string(), ...partMetadata }),
  z.strictObject({ type: z.literal('reasoning'), text: z.string(), ...partMetadata }),
  z.strictObject({
    type: z.literal('file'),
    mediaType: z.string(),
    data: z.string(),
    filename: z.string().optional(),
    ...partMetadata,
  }),
  z.strictObject({
    type: z.literal('tool-call'),
    toolCallId: z.string(),
    toolName: z.string(),
    input: jsonValueSchema,
    providerExecuted: z.boolean().optional(),
    ...partMetadata,
  }),
  z.strictObject({
    type: z.literal('tool-result'),
    toolCallId: z.string(),
    toolName: z.string(),
    output: jsonValueSchema,
    isError: z.boolean().optional(),
    ...partMetadata,
  }),
]);

const messageSchema = z.strictObject({
  role: z.enum(['system', 'user', 'assistant', 'tool']),
  content: z.string(),
  toolCalls: z.array(toolCallSchema).optional(),
  toolCallId: z.string().optional(),
  toolName: z.string().optional(),
  isError: z.boolean().optional(),
  parts: z.array(contentPartSchema).optional(),
  providerMetadata: providerMetadataSchema.optional(),
  metadata: jsonRecordSchema,
});

/** A run of messages stored once in the default section: indexes `[from, to)`. */
const messageRefSchema = z.strictObject({ $ref: z.tuple([count, count]) });

const stopSignalSchema = z.strictObject({
  reason: z.enum(stopReasons),
  message: z.string(),
  context: jsonRecordSchema,
  source: z.string(),
});

export const continuationSchema = z.strictObject({
  stopSignals: z.array(stopSignalSchema),
  continuationRequested: z.boolean(),
});

export const toolExecutionSchema = z.strictObject({
  id: z.string().min(1),
  toolCall: toolCallSchema,
  value: jsonValueSchema,
  error: agentErrorSchema.nullable(),
  blocked: z.boolean(),
  startedAt: timestamp,
  completedAt: timestamp,
  usage: usageSchema,
  /** A subagent's final state (an AgentState document), validated when the whole is decoded. */
  childState: z.lazy((): z.ZodType<unknown> => agentStateSchema).nullable(),
  /** For a call a crash interrupted: how a person resolved it (absent otherwise, and before). */
  resolution: z.enum(['approved', 'rejected', 'completed', 'reconciled']).optional(),
});

const inferenceResponseSchema = z.strictObject({
  text: z.string(),
  toolCalls: z.array(toolCallSchema),
  finishReason: z.string().nullable(),
  usage: usageSchema,
  model: z.string().optional(),
  rawFinishReason: z.string().optional(),
  providerMetadata: providerMetadataSchema.optional(),
});

/** Digests of what a step sent besides its messages (written by the model driver; absent before). */
const stepRequestSchema = z.strictObject({
  system: z.string(),
  tools: z.string(),
  settings: z.string(),
});

const stepShape = {
  id: z.string().min(1),
  outputMessages: z.array(messageSchema),
  inferenceResponse: inferenceResponseSchema,
  toolExecutions: z.array(toolExecutionSchema),
  errors: z.array(agentErrorSchema),
  structuredOutput: jsonValueSchema,
  request: stepRequestSchema.optional(),
};

export const agentStepSchema = z.strictObject({ ...stepShape, inputMessages: z.array(messageSchema) });
/** Inside an AgentState, input messages may refer to the stored conversation instead of repeating it. */
const storedStepSchema = z.strictObject({
  ...stepShape,
  inputMessages: z.array(z.union([messageRefSchema, messageSchema])),
});

const stepExecutionShape = {
  continuation: continuationSchema,
  startedAt: timestamp,
  completedAt: timestamp,
};
export const stepExecutionSchema = z.strictObject({ ...stepExecutionShape, step: agentStepSchema });
const storedStepExecutionSchema = z.strictObject({ ...stepExecutionShape, step: storedStepSchema });

const approvalDecisionSchema = z.union([
  z.strictObject({ type: z.literal('approve'), reconciled: z.literal(true).optional() }),
  z.strictObject({ type: z.literal('reject'), reason: z.string().optional() }),
  z.strictObject({ type: z.literal('edit'), args: jsonValueSchema }),
  z.strictObject({
    type: z.literal('complete'),
    result: jsonValueSchema,
    reconciled: z.literal(true).optional(),
  }),
]);

const approvalShape = {
  startedAt: timestamp,
  requestedAt: timestamp,
  toolCallIds: z.array(z.string().min(1)),
  decisions: z.record(z.string(), approvalDecisionSchema),
  /** The waiting children of the step's subagent calls, by the call's id. */
  children: z
    .record(
      z.string(),
      z.lazy((): z.ZodType<unknown> => agentStateSchema),
    )
    .optional(),
  signatures: z.record(z.string(), z.string()).optional(),
  /** The calls of `toolCallIds` a crash interrupted (asked with `reason: 'interrupted'`). */
  interrupted: z.array(z.string().min(1)).optional(),
  /** A saved intent: the unsafe calls about to start (a load makes those without a result interrupted). */
  started: z.array(z.string().min(1)).optional(),
};

const executionShape = {
  executionId: z.string().min(1),
  status: z.enum(executionStatuses),
  startedAt: timestamp,
  completedAt: timestamp.nullable(),
  continuation: continuationSchema,
  errors: z.array(agentErrorSchema),
};
export const executionStateSchema = z.strictObject({
  ...executionShape,
  stepExecutions: z.array(stepExecutionSchema),
  awaitingApproval: z.strictObject({ ...approvalShape, step: agentStepSchema }).nullable(),
});
const storedExecutionStateSchema = z.strictObject({
  ...executionShape,
  stepExecutions: z.array(storedStepExecutionSchema),
  awaitingApproval: z.strictObject({ ...approvalShape, step: storedStepSchema }).nullable(),
});

const responseFormatSchema = z.union([
  z.strictObject({ type: z.literal('text') }),
  z.strictObject({
    type: z.literal('json'),
    schema: jsonRecordSchema.optional(),
    name: z.string().optional(),
  }),
]);

const sectionSchema = z.array(messageSchema);

/** The named message sections (a section may be named `__proto__`, see `namedRecord`). */
const sectionsSchema = namedRecord(sectionSchema, 'expected an object of named message lists');

const agentContextSchema = z.strictObject({
  messages: sectionsSchema,
  metadata: jsonRecordSchema,
  systemPrompt: z.string(),
  responseFormat: responseFormatSchema,
});

/** The current serialized format; written as `formatVersion` at the top level. */
export const FORMAT_VERSION = 1;

export const agentStateSchema = z.strictObject({
  formatVersion: z.literal(FORMAT_VERSION),
  agentId: z.string().min(1),
  parentAgentId: z.string().min(1).nullable(),
  createdAt: timestamp,
  updatedAt: timestamp,
  executionCount: count,
  llmConfig: jsonRecordSchema.nullable(),
  context: agentContextSchema,
  execution: storedExecutionStateSchema.nullable(),
  /** The version of the agent that last saved the state; absent when it had none (and before versions). */
  agentVersion: z.string().min(1).optional(),
});

export type AgentStateJSON = z.infer<typeof agentStateSchema>;
export type AgentStepJSON = z.infer<typeof agentStepSchema>;
export type StoredStepJSON = z.infer<typeof storedStepSchema>;
export type ExecutionStateJSON = z.infer<typeof executionStateSchema>;
export type StoredExecutionStateJSON = z.infer<typeof storedExecutionStateSchema>;
export type StepExecutionJSON = z.infer<typeof stepExecutionSchema>;
export type ToolExecutionJSON = z.infer<typeof toolExecutionSchema>;
export type ContinuationJSON = z.infer<typeof continuationSchema>;
export type AgentErrorJSON = z.infer<typeof agentErrorSchema>;
export type ToolCallJSON = z.infer<typeof toolCallSchema>;
export type StoredStepExecutionJSON = z.infer<typeof storedStepExecutionSchema>;
export type AwaitingApprovalJSON = NonNullable<StoredExecutionStateJSON['awaitingApproval']>;
export type MessageJSON = z.infer<typeof messageSchema>;
