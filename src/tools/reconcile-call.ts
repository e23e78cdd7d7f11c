/** Asking an unsafe tool's `reconcile` whether a call a crash interrupted took effect. */
import { AgentMachineError } from '../state/errors';
import { toJsonValue } from '../state/json-value';
import type { ToolCall } from '../state/message';
import { type Tool, validateInput } from './define-tool';

/** Why a tool's reconcile gave no answer the run could use: the call then waits for a person. */
export type ReconcileErrorCode = 'RECONCILE_FAILED' | 'RECONCILE_TIMEOUT' | 'RECONCILE_INVALID_ANSWER';

/**
 * A tool's `reconcile` threw (`RECONCILE_FAILED`), did not answer within the tool's timeout
 * (`RECONCILE_TIMEOUT`), or answered something else than `{ status: 'done', result }`,
 * `{ status: 'not-done' }` or `{ status: 'unknown' }` (`RECONCILE_INVALID_ANSWER`, a result that is
 * not a JSON value included). The call it was asked about waits for a person (`reason: 'interrupted'`).
 */
export class ReconcileError extends AgentMachineError {
  static override get name(): string {
    return 'ReconcileError';
  }

  declare readonly code: ReconcileErrorCode;
  constructor(
    code: ReconcileErrorCode,
    readonly toolName: string,
    readonly toolCallId: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(code, message, options);
  }
}

/** What the run does with an interrupted call, from its tool's answer (`error`: why there was none). */
export type ReconcileVerdict =
  | { readonly status: 'done'; readonly result: unknown }
  | { readonly status: 'not-done' }
  | { readonly status: 'unknown'; readonly error: ReconcileError | null };

/**
 * Asks `tool.reconcile` about the interrupted `call` with its own `idempotencyKey`, under
 * `timeoutMs` (none when undefined) and `signal`. Never throws: a throw, a timeout, an abort or a
 * bad answer is `'unknown'` with its ReconcileError.
 */
export async function reconcileCall(
  tool: Tool,
  call: ToolCall,
  idempotencyKey: string,
  options: { readonly signal: AbortSignal; readonly timeoutMs: number | undefined },
): Promise<ReconcileVerdict> {
  const reconcile = tool.reconcile;
  if (!reconcile) return { status: 'unknown', error: null };
  const fail = (code: ReconcileErrorCode, message: string, cause?: unknown) =>
    ({
      status: 'unknown',
      error: new ReconcileError(
        code,
        call.name,
        call.id,
        message,
        cause === undefined ? undefined : { cause },
      ),
    }) as const;
  const validation = await validateInput(tool.inputSchema, call.args);
  if (!validation.ok)
    return fail(
      'RECONCILE_FAILED',
      `The input of interrupted call '${call.id}' (${call.name}) no longer passes its schema: ${validation.issues.join('; ')}`,
    );
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal.reason);
  if (options.signal.aborted) onAbort();
  else options.signal.addEventListener('abort', onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeoutMs = options.timeoutMs;
  try {
    const answer = await Promise.race([
      Promise.resolve().then(() =>
        reconcile(
          { input: validation.value, idempotencyKey, toolCallId: call.id },
          { signal: controller.signal },
        ),
      ),
      new Promise<never>((_, reject) => {
        const abort = () => reject(new Error('the run was stopped'));
        if (controller.signal.aborted) abort();
        controller.signal.addEventListener('abort', abort, { once: true });
        if (timeoutMs !== undefined)
          timer = setTimeout(() => {
            const error = new ReconcileError(
              'RECONCILE_TIMEOUT',
              call.name,
              call.id,
              `The reconcile of tool '${call.name}' did not answer about call '${call.id}' within ${timeoutMs} ms; the call waits for a person`,
            );
            reject(error);
            controller.abort(error);
          }, timeoutMs);
      }),
    ]);
    return checkedAnswer(answer, call, fail);
  } catch (error) {
    if (error instanceof ReconcileError) return { status: 'unknown', error };
    return fail(
      'RECONCILE_FAILED',
      `The reconcile of tool '${call.name}' failed for call '${call.id}': ${(error as Error)?.message ?? String(error)}; the call waits for a person`,
      error,
    );
  } finally {
    if (timer) clearTimeout(timer);
    options.signal.removeEventListener('abort', onAbort);
  }
}

/** The answer as the run takes it: its shape checked, a `'done'` result kept as its JSON form. */
function checkedAnswer(
  answer: unknown,
  call: ToolCall,
  fail: (code: ReconcileErrorCode, message: string, cause?: unknown) => ReconcileVerdict,
): ReconcileVerdict {
  const status = (answer as { status?: unknown } | null)?.status;
  if (status === 'not-done' || status === 'unknown')
    return status === 'not-done' ? { status } : { status, error: null };
  if (status !== 'done')
    return fail(
      'RECONCILE_INVALID_ANSWER',
      `The reconcile of tool '${call.name}' answered ${shown(answer)} for call '${call.id}'; expected { status: 'done', result }, { status: 'not-done' } or { status: 'unknown' }. The call waits for a person`,
    );
  try {
    // a tool's result enters the state as its JSON form (as `execute`'s does; undefined is null)
    const result = toJsonValue(
      (answer as { result?: unknown }).result ?? null,
      `The result the reconcile of '${call.id}' gave`,
    );
    return { status: 'done', result: result ?? null };
  } catch (error) {
    return fail(
      'RECONCILE_INVALID_ANSWER',
      `${(error as Error).message}; the call waits for a person`,
      error,
    );
  }
}

function shown(value: unknown): string {
  try {
    return JSON.stringify(value)?.slice(0, 80) ?? String(value);
  } catch {
    return String(value);
  }
}
