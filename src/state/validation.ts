import type { z } from 'zod';
import { InvalidStateError } from './errors';
import { jsonValueProblem } from './json-value';

// Every document read back (a state or one of its parts, a trace, an execution record) is checked
// here against its schema, so that bad input always answers as one InvalidStateError naming a path.

/**
 * A zod-free check of a document `JSON.parse` made (see state-document-check.ts): true only where
 * the schema accepts the document and would give it back unchanged, so the document itself stands
 * for the schema's output; false leaves the verdict to the schema.
 */
export type FastCheck<T> = (data: unknown) => data is T;

/**
 * Parses `data` (an object or JSON text) with `schema`, or throws InvalidStateError with the path.
 * `fast`, for JSON text: the document `JSON.parse` made is returned as it is when `fast` accepts it.
 */
export function validate<S extends z.ZodType>(
  schema: S,
  data: unknown,
  what: string,
  fast?: FastCheck<z.output<S>>,
): z.output<S> {
  return check(schema, data, what, true, fast);
}

/**
 * `validate` for a value `JSON.parse` made (a journal's records): it has no cycles and no values
 * JSON cannot hold, and the schema's own checks bound the depth of every free-form value, so the
 * walk of the whole document before the schema is left out (it costs about one JSON.parse of it).
 * Structure nested past the stack (subagent states inside each other) still answers as
 * InvalidStateError.
 */
export function validateParsedJson<S extends z.ZodType>(
  schema: S,
  data: unknown,
  what: string,
  fast?: FastCheck<z.output<S>>,
): z.output<S> {
  if (fast?.(data)) return data;
  return check(schema, data, what, false);
}

function check<S extends z.ZodType>(
  schema: S,
  data: unknown,
  what: string,
  walk: boolean,
  fast?: FastCheck<z.output<S>>,
): z.output<S> {
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
    // Made here by JSON.parse, so no one else holds it: it may stand for the schema's copy.
    if (fast?.(input)) return input;
  }
  if (walk) assertShape(input, what);
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
const MAX_DOCUMENT_DEPTH = 512;

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

function formatPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const key of path) {
    if (typeof key === 'number') out += `[${key}]`;
    else out += out ? `.${String(key)}` : String(key);
  }
  return out;
}
