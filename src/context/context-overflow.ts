/** What a provider said when it refused a prompt as too long; the counts when it named them. */
export interface ContextOverflow {
  /** The model's window, in tokens. */
  readonly limit: number | null;
  /** The refused prompt's tokens, as the provider counted them. */
  readonly promptTokens: number | null;
}

/**
 * Recognizes a provider's refusal of a prompt as too long: an HTTP 400 or 413 whose message or body
 * says so (OpenAI and compatible servers `context_length_exceeded` / "maximum context length",
 * Anthropic "prompt is too long", Google "exceeds the maximum number of tokens", ...). Null for any
 * other error.
 *
 * @example
 * contextOverflowOf(apiCallError); // { limit: 8192, promptTokens: 9100 }
 */
export function contextOverflowOf(error: unknown): ContextOverflow | null {
  for (let e: unknown = error, depth = 0; e && depth < 4; e = (e as { cause?: unknown }).cause, depth++) {
    if (typeof e !== 'object') return null;
    const { statusCode, message, responseBody } = e as {
      statusCode?: unknown;
      message?: unknown;
      responseBody?: unknown;
    };
    if (statusCode !== undefined && statusCode !== 400 && statusCode !== 413) continue;
    const text = `${typeof message === 'string' ? message : ''} ${typeof responseBody === 'string' ? responseBody : ''}`;
    if (!OVERFLOW.test(text)) continue;
    return { limit: numberAfter(text, LIMIT), promptTokens: numberAfter(text, PROMPT) };
  }
  return null;
}

const OVERFLOW =
  /context_length_exceeded|maximum context length|context window|prompt is too long|input is too long|too many (input )?tokens|exceeds the maximum number of tokens|string_above_max_length/i;
const LIMIT =
  /maximum context length is (\d+)|(\d+) (?:token )?maximum|maximum (?:of )?(\d+) tokens|limit (?:of |is )?(\d+)/i;
const PROMPT =
  /resulted in (\d+) tokens|requested (\d+) tokens|prompt is too long: (\d+) tokens|input (?:has|of) (\d+) tokens/i;

function numberAfter(text: string, pattern: RegExp): number | null {
  const match = pattern.exec(text);
  const digits = match?.slice(1).find((group) => group !== undefined);
  return digits ? Number(digits) : null;
}
