import { z } from 'zod';
import type { AgentState } from '../state/agent-state';

/** What a tool's `execute` receives beside its input. `abortSignal` is the AI SDK's name for `signal`. */
export interface ToolExecuteOptions {
  readonly toolCallId: string;
  readonly signal: AbortSignal;
  readonly abortSignal: AbortSignal;
  readonly state: AgentState;
  readonly messages: readonly unknown[];
}

/** A Standard Schema (zod 4 is one): `~standard.validate` checks a value. */
interface StandardSchema {
  readonly '~standard': {
    readonly validate: (value: unknown) => StandardResult | Promise<StandardResult>;
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

export type ToolInputSchema = StandardSchema | AiSdkSchema;

/** A tool the model may call: the same shape as the AI SDK's `tool()`, so those work unchanged. */
// biome-ignore lint/suspicious/noExplicitAny: a ToolSet mixes tools of any input type (execute is contravariant in it)
export interface Tool<INPUT = any, OUTPUT = unknown> {
  readonly description?: string;
  readonly inputSchema: ToolInputSchema;
  readonly execute?: (input: INPUT, options: ToolExecuteOptions) => OUTPUT | Promise<OUTPUT>;
  /** Per-tool timeout in ms, overriding the agent's `toolTimeoutMs`. */
  readonly timeoutMs?: number;
}

export type ToolSet = Readonly<Record<string, Tool>>;

/**
 * Defines a tool whose arguments are checked against a zod schema before `execute` runs.
 *
 * @example
 * const add = defineTool({
 *   description: 'Add two numbers',
 *   inputSchema: z.object({ a: z.number(), b: z.number() }),
 *   execute: async ({ a, b }) => a + b,
 * });
 */
export function defineTool<S extends z.ZodType, OUTPUT>(tool: {
  description?: string;
  inputSchema: S;
  execute: (input: z.output<S>, options: ToolExecuteOptions) => OUTPUT | Promise<OUTPUT>;
  timeoutMs?: number;
}): Tool<z.output<S>, OUTPUT> {
  return tool;
}

export type ValidationResult = { ok: true; value: unknown } | { ok: false; issues: string[] };

/** Checks `value` against a tool's schema; lists every issue with its path. */
export async function validateInput(schema: ToolInputSchema, value: unknown): Promise<ValidationResult> {
  if ('~standard' in schema) {
    const result = await schema['~standard'].validate(value);
    if (!result.issues) return { ok: true, value: result.value };
    return {
      ok: false,
      issues: result.issues.map((issue) => {
        const path = (issue.path ?? []).map((p) =>
          typeof p === 'object' && p !== null && 'key' in p ? p.key : p,
        );
        return path.length ? `${path.join('.')}: ${issue.message}` : issue.message;
      }),
    };
  }
  if (typeof schema.validate !== 'function') return { ok: true, value };
  const result = (await schema.validate(value)) as { success: boolean; value?: unknown; error?: Error };
  return result.success
    ? { ok: true, value: result.value }
    : { ok: false, issues: [result.error?.message ?? 'invalid input'] };
}

/** The JSON Schema (draft 7) the model is shown for a tool's input. */
export async function inputJsonSchema(schema: ToolInputSchema): Promise<Record<string, unknown>> {
  if (schema instanceof z.ZodType) {
    return z.toJSONSchema(schema, { target: 'draft-7', io: 'input' }) as Record<string, unknown>;
  }
  if ('jsonSchema' in schema) return (await schema.jsonSchema) as Record<string, unknown>;
  return { type: 'object' };
}
