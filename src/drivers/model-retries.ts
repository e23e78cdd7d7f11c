import { abortableDelay } from './abortable-delay';
import { type APICallErrorLike, isAPICallError, markAsAPICallError } from './api-call-error';

export interface RetryOptions {
  /** Retries of a retryable model error (429, 5xx, network), with exponential backoff. Default 2. */
  readonly maxRetries?: number;
  /** First backoff in ms, doubled each retry; a provider's retry-after (up to 60 s) wins. Default 1000. */
  readonly retryDelayMs?: number;
}

/**
 * A retryable provider error that was still failing after every attempt. It carries the provider's
 * last APICallError's fields (name `AI_APICallError`, status code, headers, body, `isRetryable`) and
 * is recognised by the AI SDK's `APICallError.isInstance` (AI SDK 6 and 7), with the number of
 * attempts added to its message, so the error recorded on the step says both what the provider
 * said and how often it was asked: `Rate limit exceeded (failed after 3 attempts)`.
 * `errors` holds each attempt's error; `cause` is the last one. It carries the AI SDK's markers, not
 * this library's (it is not an AgentMachineError).
 */
export class ModelRetriesExhaustedError extends Error implements APICallErrorLike {
  // The class's name; an instance is named as the AI SDK's APICallError it stands for.
  static override get name(): string {
    return 'ModelRetriesExhaustedError';
  }

  readonly url: string;
  readonly requestBodyValues: unknown;
  readonly statusCode: number | undefined;
  readonly responseHeaders: Record<string, string> | undefined;
  readonly responseBody: string | undefined;
  readonly isRetryable: boolean;
  readonly data: unknown;
  readonly attempts: number;
  readonly errors: readonly APICallErrorLike[];

  constructor(errors: readonly APICallErrorLike[]) {
    const last = errors[errors.length - 1];
    if (!last) throw new TypeError('ModelRetriesExhaustedError needs at least one error');
    super(`${last.message} (failed after ${errors.length} attempts)`, { cause: last });
    this.name = 'AI_APICallError';
    this.url = last.url;
    this.requestBodyValues = last.requestBodyValues;
    this.statusCode = last.statusCode;
    this.responseHeaders = last.responseHeaders;
    this.responseBody = last.responseBody;
    this.isRetryable = last.isRetryable;
    this.data = last.data;
    this.attempts = errors.length;
    this.errors = Object.freeze([...errors]);
    markAsAPICallError(this);
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
  const failures: APICallErrorLike[] = [];
  for (let attempt = 0; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!isAPICallError(error) || !error.isRetryable || signal.aborted) throw error;
      failures.push(error);
      if (attempt >= maxRetries) throw maxRetries === 0 ? error : new ModelRetriesExhaustedError(failures);
      await abortableDelay(retryDelay(error, attempt, options.retryDelayMs ?? 1000), signal);
    }
  }
}

function retryDelay(error: APICallErrorLike, attempt: number, base: number): number {
  const headers = error.responseHeaders ?? {};
  const ms = Number(headers['retry-after-ms']);
  if (headers['retry-after-ms'] !== undefined && Number.isFinite(ms) && ms >= 0 && ms <= 60_000) return ms;
  const seconds = Number(headers['retry-after']);
  if (headers['retry-after'] !== undefined && Number.isFinite(seconds) && seconds >= 0 && seconds <= 60) {
    return seconds * 1000;
  }
  return base * 2 ** attempt;
}
