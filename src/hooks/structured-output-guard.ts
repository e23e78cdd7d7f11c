import { z } from 'zod';
import { AgentError } from '../state/agent-error';
import { jsonValueProblem, toJsonValue } from '../state/json-value';
import { Message } from '../state/message';
import type { Hook } from './hook';

/** A schema a final answer is checked against: zod, or any Standard Schema that validates synchronously. */
export type ResponseSchema = z.ZodType | { readonly '~standard': { validate(value: unknown): unknown } };

/**
 * When the agent has a response format, checks each final answer after its step: the text must be
 * JSON (a ```json fence is tolerated) that the schema accepts. A valid answer's parsed value is
 * kept on the step (`state.structuredOutput()`); `finalResponse()` stays the text. An invalid
 * answer becomes a step error, the model is told what was wrong and the loop goes on, so the
 * error policy decides how many attempts it gets.
 */
export function structuredOutputGuard(schema: ResponseSchema): Hook {
  return {
    name: 'structuredOutputGuard',
    afterStep: (state) => {
      const step = state.currentStep();
      if (!step || step.hasToolCalls() || step.hasErrors()) return undefined;
      const result = check(schema, step.outputText());
      if (result.ok) return state.withCurrentStep(step.withStructuredOutput(result.value));
      const error = AgentError.of(
        'StructuredOutputInvalid',
        `The final answer does not match the response format: ${result.issues.join('; ')}`,
        'INVALID_STRUCTURED_OUTPUT',
        { issues: result.issues },
      );
      const feedback = Message.user(
        `Your answer does not match the required response format (${result.issues.join('; ')}). ` +
          'Answer again with only JSON that matches the schema.',
      );
      return state
        .withCurrentStep(step.withError(error).withOutputMessages([...step.outputMessages(), feedback]))
        .withContinuationRequested();
    },
  };
}

type Checked = { ok: true; value: unknown } | { ok: false; issues: string[] };

function check(schema: ResponseSchema, text: string): Checked {
  let value: unknown;
  try {
    value = JSON.parse(stripFence(text));
  } catch (error) {
    return { ok: false, issues: [`not valid JSON (${(error as Error).message})`] };
  }
  // Checked before the schema runs: a recursive schema would otherwise recurse once per level.
  const problem = jsonValueProblem(value);
  if (problem) return { ok: false, issues: [problem.detail] };
  if (schema instanceof z.ZodType) {
    const parsed = schema.safeParse(value);
    if (parsed.success) return kept(parsed.data);
    return {
      ok: false,
      issues: parsed.error.issues.map((i) =>
        i.path.length ? `${i.path.join('.')}: ${i.message}` : i.message,
      ),
    };
  }
  const result = schema['~standard'].validate(value) as { value?: unknown; issues?: { message: string }[] };
  if (typeof (result as { then?: unknown }).then === 'function') {
    throw new TypeError(
      'responseFormat: asynchronous schemas are not supported; use a synchronous zod schema',
    );
  }
  return result.issues ? { ok: false, issues: result.issues.map((i) => i.message) } : kept(result.value);
}

/** A schema may transform the value: what is kept is its JSON form, refused when that cannot be saved. */
function kept(value: unknown): Checked {
  try {
    return { ok: true, value: toJsonValue(value, 'The structured output') };
  } catch (error) {
    return { ok: false, issues: [(error as Error).message] };
  }
}

function stripFence(text: string): string {
  const fenced = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/.exec(text);
  return fenced ? (fenced[1] as string) : text;
}
