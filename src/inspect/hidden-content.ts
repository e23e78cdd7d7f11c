/**
 * What the inspector sanitizers let through of a value: a list of what may be shown, not of what
 * must be hidden, so a field added to an event later stays hidden until it is named here. Text is
 * shown only under keys that hold identifiers and names; any other text (messages, prompts, tool
 * arguments and results, error messages, llmConfig values) is replaced by its length.
 */
import { AgentError } from '../state/agent-error';
import { setOwn } from '../state/json-value';

/** Keys whose text is an identifier, a name or a status: shown as it is. */
const SHOWN_TEXT = new Set([
  'type',
  'id',
  'sessionId',
  'agentId',
  'parentAgentId',
  'executionId',
  'stepId',
  'toolCallId',
  'toolName',
  'name',
  'code',
  'stage',
  'status',
  'stopReason',
  'hookStages',
  'source',
]);

/** Levels of an event or context shown; deeper parts are hidden whole. */
const SHOWN_DEPTH = 6;

/**
 * `value` as an inspector may show it: `summarize` answers for AgentStates (and their JSON), errors
 * show their name and code, identifiers and numbers stay, other text is replaced by its length.
 *
 * @example
 * hideContent({ type: 'user.message', text: 'my password is hunter2' }, 'event', () => null);
 * // { type: 'user.message', text: '[22 characters hidden]' }
 */
export function hideContent(value: unknown, key: string, summarize: (value: unknown) => unknown): unknown {
  return hide(value, key, 0, summarize);
}

function hide(value: unknown, key: string, depth: number, summarize: (value: unknown) => unknown): unknown {
  const summary = summarize(value);
  if (summary !== null) return summary;
  switch (typeof value) {
    case 'number':
    case 'boolean':
    case 'undefined':
      return value;
    case 'string':
      return SHOWN_TEXT.has(key) ? value : `[${value.length} characters hidden]`;
    case 'object':
      break;
    default:
      return undefined;
  }
  if (value === null) return null;
  if (isActorRef(value)) return value;
  if (value instanceof Error || AgentError.is(value)) return errorShown(value);
  if (depth >= SHOWN_DEPTH) return '[hidden]';
  if (Array.isArray(value)) return value.map((item) => hide(item, key, depth + 1, summarize));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    const shown = hide(v, k, depth + 1, summarize);
    if (shown !== undefined) setOwn(out, k, shown);
  }
  return out;
}

/** An error's class and code; its message may quote arguments, results or the conversation. */
function errorShown(error: object): { name: string; code: string | null } {
  const { name, code } = error as { name?: unknown; code?: unknown };
  return { name: typeof name === 'string' ? name : 'Error', code: typeof code === 'string' ? code : null };
}

/** An actor reference: the inspector shows it as its id. */
function isActorRef(value: object): boolean {
  const ref = value as { sessionId?: unknown; send?: unknown };
  return typeof ref.sessionId === 'string' && typeof ref.send === 'function';
}
