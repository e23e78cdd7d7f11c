/**
 * The AI SDK's APICallError, recognised the way the AI SDK itself does (`APICallError.isInstance`):
 * by the global symbol it marks its errors with, which AI SDK 6 and 7 share. No import of
 * `@ai-sdk/provider` is needed, so errors of either major are recognised.
 */
const errorMarker = Symbol.for('vercel.ai.error');
const apiCallErrorMarker = Symbol.for('vercel.ai.error.AI_APICallError');

/** The fields of an AI SDK APICallError (a failed HTTP call to the provider). */
export interface APICallErrorLike extends Error {
  readonly url: string;
  readonly requestBodyValues: unknown;
  readonly statusCode?: number | undefined;
  readonly responseHeaders?: Record<string, string> | undefined;
  readonly responseBody?: string | undefined;
  readonly isRetryable: boolean;
  readonly data?: unknown;
}

export function isAPICallError(error: unknown): error is APICallErrorLike {
  return (
    typeof error === 'object' &&
    error !== null &&
    (error as Record<symbol, unknown>)[apiCallErrorMarker] === true
  );
}

/** Marks an error so that `APICallError.isInstance` (either AI SDK major) recognises it. */
export function markAsAPICallError(error: Error): void {
  Object.defineProperty(error, errorMarker, { value: true });
  Object.defineProperty(error, apiCallErrorMarker, { value: true });
}
