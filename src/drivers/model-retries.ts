import { APICallError } from '@ai-sdk/provider';
import { abortableDelay } from './abortable-delay';

export interface RetryOptions {
  /** Retries of a retryable model error (429, 5xx, network), with exponential backoff. Default 2. */
  readonly maxRetries?: number;
  /** First backoff in ms, doubled each retry; a provider's retry-after (up to 60 s) wins. Default 1000. */
  readonly retryDelayMs?: number;
}

/**
 * A retryable provider error that was still failing after every attempt. It is the provider's
 * last APICallError (same name, status code, headers, body and `isRetryable`), with the number of
 * attempts added to its message, so the error recorded on the step says both what the provider
 * said and how often it was asked: `Rate limit exceeded (failed after 3 attempts)`.
 * `errors` holds each attempt's error; `cause` is the last one.
 */
export class ModelRetriesExhaustedError extends APICallError {
  readonly attempts: number;
  readonly errors: readonly APICallError[];

  constructor(errors: readonly APICallError[]) {
    const last = errors[errors.length - 1];
    if (!last) throw new TypeError('ModelRetriesExhaustedError needs at least one error');
    super({
      message: `${last.message} (failed after ${errors.length} attempts)`,
      url: last.url,
      requestBodyValues: last.requestBodyValues,
      statusCode: last.statusCode,
      responseHeaders: last.responseHeaders,
      responseBody: last.responseBody,
      isRetryable: last.isRetryable,
      data: last.data,
      cause: last,
    });
    this.attempts = errors.length;
    this.errors = Object.freeze([...errors]);
  }
}

/**
 * Calls `call`, retrying only what the provider marks retryable (`APICallError.isRetryable`: 408,
 * 409, 429, 5xx, network errors). Any other error, and an abort, is thrown at once, unchanged.
 * After the last retry the error is a ModelRetriesExhaustedError naming the attempts.
 *
 * @example
 * const result = await withRetries(() => model.doGenerate(call), signal, { maxRetries: 2 });
 */
export async function withRetries<T>(
  call: () => PromiseLike<T>,
  signal: AbortSignal,
  options: RetryOptions = {},
): Promise<T> {
  const maxRetries = options.maxRetries ?? 2;
  const failures: APICallError[] = [];
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!APICallError.isInstance(error) || !error.isRetryable || signal.aborted) throw error;
      failures.push(error);
      if (attempt >= maxRetries) throw maxRetries === 0 ? error : new ModelRetriesExhaustedError(failures);
      await abortableDelay(retryDelay(error, attempt, options.retryDelayMs ?? 1000), signal);
    }
  }
}

function retryDelay(error: APICallError, attempt: number, base: number): number {
  const headers = error.responseHeaders ?? {};
  const ms = Number(headers['retry-after-ms']);
  if (headers['retry-after-ms'] !== undefined && Number.isFinite(ms) && ms >= 0 && ms <= 60_000) return ms;
  const seconds = Number(headers['retry-after']);
  if (headers['retry-after'] !== undefined && Number.isFinite(seconds) && seconds >= 0 && seconds <= 60) {
    return seconds * 1000;
  }
  return base * 2 ** attempt;
}
