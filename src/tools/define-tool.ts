import { z } from 'zod';
import type { AgentState } from '../state/agent-state';
import { InvalidArgumentError, shownValue } from '../state/errors';
import type { Message } from '../state/message';

/** What a tool's `execute` receives beside its input. `abortSignal` is the AI SDK's name for `signal`. */
export interface ToolExecuteOptions {
  readonly toolCallId: string;
  /**
   * The same for this call in every attempt and process (a hash of the session, execution, step and
   * call id; stable across resume, decisions and workers): pass it to APIs that deduplicate requests.
   */
  readonly idempotencyKey: string;
  /** Aborted when the run is stopped or the call times out. */
  readonly signal: AbortSignal;
  readonly abortSignal: AbortSignal;
  /** The state the step's tools run against (read-only: tools return values, not states). */
  readonly state: AgentState;
  /** The conversation so far, as agent-machine Messages (role and string content). */
  readonly messages: readonly Message[];
  /** The AI SDK's tool context; agent-machine has none, so it is always `{}`. */
  readonly context: Readonly<Record<string, unknown>>;
}

/**
 * The options type a tool's `execute` is declared with. AI SDK `tool()`s declare `messages` as
 * their own `ModelMessage[]`; we do not depend on `ai`, so `messages` is widened here to let
 * those tools type-check unchanged. Our own tools see the precise ToolExecuteOptions.
 */
// biome-ignore lint/suspicious/noExplicitAny: the AI SDK's ModelMessage[] cannot be named without depending on `ai`
type DeclaredExecuteOptions = ToolExecuteOptions & { readonly messages: any[] };

/** A Standard Schema (zod 4 is one): `~standard.validate` checks a value. */
interface StandardSchema {
  readonly '~standard': {
    readonly validate: (value: unknown) => StandardResult | Promise<StandardResult>;
    /** Standard JSON Schema, when the library offers it. */
    readonly jsonSchema?: { readonly input: (options: { target: string }) => Record<string, unknown> };
  };
}
type StandardResult =
  | { readonly value: unknown; readonly issues?: undefined }
  | { readonly issues: ReadonlyArray<{ readonly message: string; readonly path?: ReadonlyArray<unknown> }> };

/** The AI SDK's `jsonSchema()` / `zodSchema()` wrapper. */
interface AiSdkSchema {
  readonly jsonSchema: unknown;
  readonly validate?: (value: unknown) => unknown;
}

/** A schema for a tool's input: zod (or any Standard Schema), the AI SDK's `jsonSchema()`, or a lazy one. */
export type ToolInputSchema = StandardSchema | AiSdkSchema | (() => AiSdkSchema);

/** A tool the model may call: the same shape as the AI SDK's `tool()`, so those work unchanged. */
// biome-ignore lint/suspicious/noExplicitAny: a ToolSet mixes tools of any input type (execute is contravariant in it)
export interface Tool<INPUT = any, OUTPUT = unknown> {
  /** Shown to the model. The AI SDK's function form is called with an empty context. */
  // biome-ignore lint/suspicious/noExplicitAny: the AI SDK types the context per tool
  readonly description?: string | ((options: { context: any }) => string);
  readonly inputSchema: ToolInputSchema;
  readonly execute?: (input: INPUT, options: DeclaredExecuteOptions) => OUTPUT | PromiseLike<OUTPUT>;
  /** Per-tool timeout in ms, overriding the agent's `toolTimeoutMs`. */
  readonly timeoutMs?: number;
  /**
   * A person must approve each call first (`true`, or a function of the call's input and the
   * state): the run waits in `awaitingApproval` until `agent.decide()` or approve/reject/edit events.
   */
  readonly needsApproval?:
    | boolean
    | ((input: INPUT, options: ApprovalCheckOptions) => boolean | PromiseLike<boolean>);
  /**
   * What calling the tool does to the world, for running a call again after a crash (ToolEffect).
   * Unset means the default `toolEffect()` reads: `'unsafe'` with `needsApproval`, else `'idempotent'`.
   */
  readonly effect?: ToolEffect;
  /**
   * For an `'unsafe'` tool: asked whether a call a crash interrupted took effect (by its
   * `idempotencyKey`, the one `execute` had), before a person is: `'done'` records `result` as the
   * call's output, `'not-done'` runs the call once more, `'unknown'` leaves it to a person.
   */
  readonly reconcile?: ToolReconcile<INPUT>;
}

/** What a tool's `reconcile` is asked about: the interrupted call, as `execute` had it. */
export interface ReconcileRequest<INPUT = unknown> {
  readonly input: INPUT;
  /** The call's own key, the one its interrupted `execute` was given. */
  readonly idempotencyKey: string;
  readonly toolCallId: string;
}

/**
 * What a tool's `reconcile` answers: the call took effect (`'done'`, with the result to record as
 * its output), it did not (`'not-done'`: it runs once more, with the same key), or the tool cannot
 * tell (`'unknown'`: a person decides, as without a reconcile).
 */
export type ReconcileOutcome =
  | { readonly status: 'done'; readonly result: unknown }
  | { readonly status: 'not-done' }
  | { readonly status: 'unknown' };

/** A tool's `reconcile`; `signal` aborts when the run stops or the tool's timeout passes. */
export type ToolReconcile<INPUT = unknown> = (
  request: ReconcileRequest<INPUT>,
  options: { readonly signal: AbortSignal },
) => ReconcileOutcome | PromiseLike<ReconcileOutcome>;

/**
 * What a call does to the world: `'read'` changes nothing; `'idempotent'` may change it, but a
 * second call with the same input changes nothing more; `'unsafe'` must not be repeated
 * unasked (a payment, an email sent).
 */
export type ToolEffect = 'read' | 'idempotent' | 'unsafe';

export const TOOL_EFFECTS: readonly ToolEffect[] = ['read', 'idempotent', 'unsafe'];

/**
 * A tool's effect: the declared one, else `'unsafe'` for a tool that needs approval (a person
 * is asked because the call matters), else `'idempotent'`. AI SDK `tool()`s have none declared.
 *
 * @example
 * toolEffect(defineTool({ inputSchema, execute, needsApproval: true })); // 'unsafe'
 */
export function toolEffect(tool: Pick<Tool, 'effect' | 'needsApproval'>): ToolEffect {
  if (tool.effect !== undefined) return tool.effect;
  return tool.needsApproval !== undefined && tool.needsApproval !== false ? 'unsafe' : 'idempotent';
}

/** What a `needsApproval` function gets beside the call's input (the AI SDK's fields included). */
export interface ApprovalCheckOptions {
  readonly toolCallId: string;
  readonly state: AgentState;
  // biome-ignore lint/suspicious/noExplicitAny: the AI SDK types these per tool; the loop passes the conversation and {}
  messages: any[];
  // biome-ignore lint/suspicious/noExplicitAny: see above
  context: any;
}

export type ToolSet = Readonly<Record<string, Tool>>;

/**
 * Defines a tool whose arguments are checked against a zod schema before `execute` runs. The
 * defined tool carries its `effect` (ToolEffect), the declared one or its default (`toolEffect()`).
 *
 * @example
 * const add = defineTool({
 *   description: 'Add two numbers',
 *   inputSchema: z.object({ a: z.number(), b: z.number() }),
 *   execute: async ({ a, b }) => a + b,
 * });
 * add.effect; // 'idempotent'
 */
export function defineTool<S extends z.ZodType, OUTPUT>(tool: {
  description?: string;
  inputSchema: S;
  execute: (input: z.output<S>, options: ToolExecuteOptions) => OUTPUT | Promise<OUTPUT>;
  timeoutMs?: number;
  needsApproval?:
    | boolean
    | ((input: z.output<S>, options: ApprovalCheckOptions) => boolean | PromiseLike<boolean>);
  effect?: ToolEffect;
  reconcile?: ToolReconcile<z.output<S>>;
}): Tool<z.output<S>, OUTPUT> & { readonly effect: ToolEffect } {
  if (tool.effect !== undefined && !TOOL_EFFECTS.includes(tool.effect))
    throw new InvalidArgumentError(
      'effect',
      `${JSON.stringify(tool.effect)} is not 'read', 'idempotent' or 'unsafe'`,
    );
  if (tool.reconcile !== undefined && typeof tool.reconcile !== 'function')
    throw new InvalidArgumentError(
      'reconcile',
      `expected a function ({ input, idempotencyKey, toolCallId }, { signal }) => outcome, got ${shownValue(tool.reconcile)}`,
    );
  if (tool.reconcile !== undefined && toolEffect(tool) !== 'unsafe')
    throw new InvalidArgumentError(
      'reconcile',
      `only an 'unsafe' tool is reconciled after a crash (this one is '${toolEffect(tool)}', run again as it is): declare effect: 'unsafe'`,
    );
  if (
    tool.timeoutMs !== undefined &&
    (typeof tool.timeoutMs !== 'number' || !Number.isFinite(tool.timeoutMs) || tool.timeoutMs <= 0)
  )
    throw new InvalidArgumentError(
      'timeoutMs',
      `expected a number of milliseconds > 0, got ${shownValue(tool.timeoutMs)} (leave it out for no timeout)`,
    );
  return Object.assign({}, tool, { effect: toolEffect(tool) });
}

/**
 * The description the model is shown for a tool.
 *
 * @example
 * toolDescription(add); // 'Add two numbers'
 */
export function toolDescription(tool: Tool): string | undefined {
  return typeof tool.description === 'function' ? tool.description({ context: {} }) : tool.description;
}

export type ValidationResult = { ok: true; value: unknown } | { ok: false; issues: string[] };

/** The AI SDK's lazy schemas are functions: resolve them before use. */
function resolveSchema(schema: ToolInputSchema): StandardSchema | AiSdkSchema {
  return typeof schema === 'function' ? schema() : schema;
}

/**
 * Checks `value` against a tool's schema; lists every issue with its path.
 *
 * @example
 * await validateInput(z.object({ a: z.number() }), { a: 'x' });
 * // { ok: false, issues: ['a: Invalid input: expected number, received string'] }
 */
export async function validateInput(input: ToolInputSchema, value: unknown): Promise<ValidationResult> {
  const schema = resolveSchema(input);
  if ('~standard' in schema) {
    const result = await schema['~standard'].validate(value);
    if (!result.issues) return { ok: true, value: result.value };
    return { ok: false, issues: result.issues.map(formatIssue) };
  }
  // The AI SDK's jsonSchema() without a `validate` option does not validate: the tool gets the value.
  if (typeof schema.validate !== 'function') return { ok: true, value };
  const result = (await schema.validate(value)) as { success: boolean; value?: unknown; error?: unknown };
  if (result.success) return { ok: true, value: result.value };
  // zodSchema() fails with a ZodError whose message is a JSON dump: list its issues instead.
  const issues = (result.error as { issues?: unknown } | undefined)?.issues;
  if (Array.isArray(issues)) return { ok: false, issues: issues.map(formatIssue) };
  return { ok: false, issues: [(result.error as Error | undefined)?.message ?? 'invalid input'] };
}

function formatIssue(issue: { readonly message: string; readonly path?: ReadonlyArray<unknown> }): string {
  const path = (issue.path ?? []).map((p) => (typeof p === 'object' && p !== null && 'key' in p ? p.key : p));
  return path.length ? `${path.join('.')}: ${issue.message}` : issue.message;
}

/**
 * The JSON Schema (draft 7) the model is shown for a tool's input.
 *
 * @example
 * await inputJsonSchema(z.object({ a: z.number() }));
 * // { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { a: { type: 'number' } }, required: ['a'] }
 */
export async function inputJsonSchema(input: ToolInputSchema): Promise<Record<string, unknown>> {
  const schema = resolveSchema(input);
  if (schema instanceof z.ZodType) {
    return z.toJSONSchema(schema, { target: 'draft-7', io: 'input' }) as Record<string, unknown>;
  }
  if ('jsonSchema' in schema) return (await schema.jsonSchema) as Record<string, unknown>;
  const standard = schema['~standard'].jsonSchema;
  if (standard) return standard.input({ target: 'draft-07' });
  // A Standard Schema that cannot describe itself: the model is told only that it takes an object.
  return { type: 'object' };
}
