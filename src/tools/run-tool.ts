import { createHash } from 'node:crypto';
import { AgentError } from '../state/agent-error';
import { AgentState } from '../state/agent-state';
import { AgentStopError } from '../state/agent-stop-error';
import type { ToolCall } from '../state/message';
import { ToolExecution } from '../state/tool-execution';
import { type Tool, type ToolExecuteOptions, type ToolSet, validateInput } from './define-tool';
import { invalidArguments } from './invalid-arguments';
import { ToolTimeoutError } from './tool-timeout-error';

/** What running one call needs of the executor's options. */
interface ToolCallOptions {
  readonly tools: ToolSet;
  readonly signal: AbortSignal;
  readonly timeoutMs?: number;
  readonly idempotencyScope?: string;
}

/**
 * Runs one call: finds its tool, checks its arguments and calls `execute` (under its timeout, if
 * any). Resolves with the call's record, a failed one too, or with the child's state when its
 * subagent waits for decisions; an AgentStopError propagates.
 */
export async function runTool(
  call: ToolCall,
  state: AgentState,
  options: ToolCallOptions,
  startedAt: number,
): Promise<ToolExecution | AgentState> {
  const tool = Object.hasOwn(options.tools, call.name) ? options.tools[call.name] : undefined;
  if (!tool) {
    const known = Object.keys(options.tools);
    return ToolExecution.failed(
      call,
      AgentError.of(
        'UnknownTool',
        `Tool '${call.name}' does not exist. Available tools: ${known.length ? known.join(', ') : 'none'}`,
        'UNKNOWN_TOOL',
      ),
      startedAt,
    );
  }
  const validation = await validateInput(tool.inputSchema, call.args);
  if (!validation.ok) {
    return ToolExecution.failed(call, invalidArguments(call, validation.issues), startedAt);
  }
  if (!tool.execute) {
    return ToolExecution.failed(
      call,
      AgentError.of('ToolNotExecutable', `Tool '${call.name}' has no execute function`, 'NO_EXECUTE'),
      startedAt,
    );
  }
  const execute = tool.execute;
  const timeoutMs = tool.timeoutMs ?? options.timeoutMs;
  // The declared type widens `messages` for AI SDK tools; the value is our ToolExecuteOptions.
  type ExecuteOptions = Parameters<NonNullable<Tool['execute']>>[1];

  // Without a timeout the call shares the step's signal: no controller of its own.
  if (timeoutMs === undefined) {
    try {
      const value = await execute(
        validation.value,
        executeOptions(call, options, state, options.idempotencyScope) as ExecuteOptions,
      );
      return recorded(call, value, startedAt);
    } catch (error) {
      return failedCall(call, error, startedAt);
    }
  }
  const controller = new AbortController();
  const onAbort = () => controller.abort(options.signal.reason);
  if (options.signal.aborted) onAbort();
  else options.signal.addEventListener('abort', onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const value = await Promise.race([
      Promise.resolve().then(() =>
        execute(
          validation.value,
          executeOptions(call, controller, state, options.idempotencyScope) as ExecuteOptions,
        ),
      ),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const error = new ToolTimeoutError(call.name, timeoutMs);
          controller.abort(error);
          reject(error);
        }, timeoutMs);
      }),
    ]);
    return recorded(call, value, startedAt);
  } catch (error) {
    return failedCall(call, error, startedAt);
  } finally {
    if (timer) clearTimeout(timer);
    options.signal.removeEventListener('abort', onAbort);
  }
}

/** What a call returned, as recorded: a subagent tool answers with the child's state, final or waiting for decisions. */
function recorded(call: ToolCall, value: unknown, startedAt: number): ToolExecution | AgentState {
  if (!(value instanceof AgentState)) return ToolExecution.succeeded(call, value ?? null, startedAt);
  return value.approval() !== null ? value : ToolExecution.ofChild(call, value, startedAt);
}

/** A call that threw fails alone; an AgentStopError stops the run. */
function failedCall(call: ToolCall, error: unknown, startedAt: number): ToolExecution {
  if (AgentStopError.is(error)) throw error;
  return ToolExecution.failed(call, error, startedAt);
}

/**
 * What `execute` gets; `messages` is built only if the tool reads it (it copies the conversation),
 * and `signal` is read from `source` only when the tool reads it (the step's may be made on first read).
 */
function executeOptions(
  call: ToolCall,
  source: { readonly signal: AbortSignal },
  state: AgentState,
  scope: string | undefined,
): ToolExecuteOptions {
  return {
    toolCallId: call.id,
    get idempotencyKey() {
      return idempotencyKey(scope ?? state.agentId(), state, call.id);
    },
    get signal() {
      return source.signal;
    },
    get abortSignal() {
      return source.signal;
    },
    state,
    context: {},
    get messages() {
      return state.messages();
    },
  };
}

/**
 * The key of one call, the same in every attempt and process: a hash of the session (or agent), the
 * agent, the execution, the step's number and the call's id.
 */
export function idempotencyKey(scope: string, state: AgentState, toolCallId: string): string {
  const subject = JSON.stringify([
    scope,
    state.agentId(),
    state.executionId(),
    state.stepCount() + 1,
    toolCallId,
  ]);
  return createHash('sha256').update(subject).digest('base64url');
}
