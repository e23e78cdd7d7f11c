import { AgentError, decodeAgentError } from './agent-error';
import { newId } from './ids';
import { asJsonValue, UnsavableValueError } from './json-value';
import { decodeToolCall, type ToolCall } from './message';
import { decodeNestedState, type NestedAgentState } from './nested-state';
import { type AgentStateJSON, type ToolExecutionJSON, toolExecutionSchema } from './schemas';
import { SubagentFailedError } from './subagent-failed-error';
import { Usage } from './usage';
import { validate } from './validation';

// AgentState, named through nested-state.ts: agent-state.ts imports this file.
type AgentState = NestedAgentState;

interface ToolExecutionProps {
  readonly id: string;
  readonly toolCall: ToolCall;
  readonly value: unknown;
  readonly error: AgentError | null;
  readonly blocked: boolean;
  readonly startedAt: number;
  readonly completedAt: number;
  readonly usage: Usage;
  /** A subagent's final state, when the call ran one. */
  readonly childState: AgentState | null;
  /** For a call a crash interrupted: how a person resolved it. */
  readonly resolution?: ToolResolution;
}

/**
 * How a call that a crash interrupted was resolved: by a person, run again (`'approved'`, an edit
 * included), recorded as not run (`'rejected'`), or given its result (`'completed'`); or by its
 * tool's `reconcile`, with no person asked (`'reconciled'`: recorded with the result it gave when
 * it answered `'done'`, run once more when it answered `'not-done'`).
 */
export type ToolResolution = 'approved' | 'rejected' | 'completed' | 'reconciled';

/** The outcome of one tool call: its value or its error, whether a hook blocked it, and timing. */
export class ToolExecution {
  static fromJSON(data: unknown): ToolExecution {
    return ToolExecution.fromParsed(validate(toolExecutionSchema, data, 'ToolExecution'));
  }

  /** @internal from a validated document, or the part of one that holds it */
  static fromParsed(json: ToolExecutionJSON): ToolExecution {
    return new ToolExecution({
      id: json.id,
      toolCall: decodeToolCall(json.toolCall),
      value: json.value,
      error: json.error === null ? null : decodeAgentError(json.error),
      blocked: json.blocked,
      startedAt: Date.parse(json.startedAt),
      completedAt: Date.parse(json.completedAt),
      usage: Usage.of(json.usage),
      // validated with this document: the schema checks a child as a whole AgentState
      childState: json.childState === null ? null : decodeNestedState(json.childState as AgentStateJSON),
      ...(json.resolution ? { resolution: json.resolution } : {}),
    });
  }

  private constructor(private readonly props: ToolExecutionProps) {}

  /**
   * A call that returned `value`, kept as its JSON form (`toJsonValue`): a value that cannot be
   * saved (too deep, a cycle), or a whole result that is a function or a symbol, raises
   * ValueTooDeepError or UnsavableValueError here, where it enters.
   */
  static succeeded(
    toolCall: ToolCall,
    value: unknown,
    startedAt: number,
    completedAt = Date.now(),
  ): ToolExecution {
    return new ToolExecution({
      id: newId(),
      toolCall,
      value: resultValue(toolCall, value),
      error: null,
      blocked: false,
      startedAt,
      completedAt,
      usage: Usage.zero,
      childState: null,
    });
  }

  static failed(
    toolCall: ToolCall,
    error: unknown,
    startedAt: number,
    completedAt = Date.now(),
  ): ToolExecution {
    return new ToolExecution({
      id: newId(),
      toolCall,
      value: null,
      error: AgentError.from(error),
      blocked: false,
      startedAt,
      completedAt,
      usage: Usage.zero,
      childState: null,
    });
  }

  /** A call a hook refused: recorded as a failure named ToolExecutionBlocked. */
  static blocked(toolCall: ToolCall, reason: string, at = Date.now()): ToolExecution {
    const error = AgentError.of(
      'ToolExecutionBlocked',
      reason || `Tool call '${toolCall.name}' was blocked`,
      'TOOL_BLOCKED',
    );
    return new ToolExecution({
      id: newId(),
      toolCall,
      value: null,
      error,
      blocked: true,
      startedAt: at,
      completedAt: at,
      usage: Usage.zero,
      childState: null,
    });
  }

  /**
   * A call that ran a subagent: the child's final state is kept and its usage counts for the call;
   * the result is the child's final answer, or a SubagentFailedError naming how it ended.
   */
  static ofChild(
    toolCall: ToolCall,
    child: AgentState,
    startedAt: number,
    completedAt = Date.now(),
  ): ToolExecution {
    const answered = child.status() === 'completed' && child.hasFinalResponse();
    const execution = answered
      ? ToolExecution.succeeded(toolCall, child.finalResponse(), startedAt, completedAt)
      : ToolExecution.failed(toolCall, new SubagentFailedError(toolCall.name, child), startedAt, completedAt);
    return execution.withChildState(child);
  }

  id(): string {
    return this.props.id;
  }
  toolCall(): ToolCall {
    return this.props.toolCall;
  }
  toolCallId(): string {
    return this.props.toolCall.id;
  }
  name(): string {
    return this.props.toolCall.name;
  }
  args(): unknown {
    return this.props.toolCall.args;
  }
  value(): unknown {
    return this.props.value;
  }
  error(): AgentError | null {
    return this.props.error;
  }
  hasError(): boolean {
    return this.props.error !== null;
  }
  wasBlocked(): boolean {
    return this.props.blocked;
  }
  startedAt(): Date {
    return new Date(this.props.startedAt);
  }
  completedAt(): Date {
    return new Date(this.props.completedAt);
  }
  duration(): number {
    return (this.props.completedAt - this.props.startedAt) / 1000;
  }
  /** Tokens and cost spent inside the call (a subagent's run); zero for plain tools. */
  usage(): Usage {
    return this.props.usage;
  }

  /** For a call a crash interrupted: how a person (or its tool's reconcile) resolved it; undefined for any other call. */
  resolution(): ToolResolution | undefined {
    return this.props.resolution;
  }

  /** The subagent's final state, when this call ran one; the tree of agents stays readable. */
  childState(): AgentState | null {
    return this.props.childState;
  }

  withUsage(usage: Usage): ToolExecution {
    return new ToolExecution({ ...this.props, usage });
  }
  /** This call as having run the subagent `child`: its usage counts for the calling step. */
  withChildState(child: AgentState): ToolExecution {
    return new ToolExecution({ ...this.props, childState: child, usage: child.usage() });
  }
  /**
   * This call, ended (a stop, the approval timeout) while its subagent `child` waited for
   * decisions, keeping the child's waiting state; its usage is left as it was (not the child's).
   */
  withEndedChild(child: AgentState): ToolExecution {
    return new ToolExecution({ ...this.props, childState: child });
  }
  /** The same execution under `id` (a replay keeps the recorded execution's id). */
  withId(id: string): ToolExecution {
    return new ToolExecution({ ...this.props, id });
  }
  /** This call as one a crash interrupted and a person resolved (`resolution`). */
  withResolution(resolution: ToolResolution): ToolExecution {
    return new ToolExecution({ ...this.props, resolution });
  }
  withValue(value: unknown): ToolExecution {
    return new ToolExecution({ ...this.props, value: resultValue(this.props.toolCall, value), error: null });
  }
  withError(error: unknown): ToolExecution {
    return new ToolExecution({ ...this.props, value: null, error: AgentError.from(error) });
  }

  toJSON(): ToolExecutionJSON {
    const p = this.props;
    return {
      id: p.id,
      toolCall: { id: p.toolCall.id, name: p.toolCall.name, args: p.toolCall.args ?? null },
      value: p.value ?? null,
      error: p.error,
      blocked: p.blocked,
      startedAt: new Date(p.startedAt).toISOString(),
      completedAt: new Date(p.completedAt).toISOString(),
      usage: p.usage,
      childState: (p.childState?.toJSON() ?? null) as unknown,
      ...(p.resolution ? { resolution: p.resolution } : {}),
    };
  }
}

function resultValue(call: ToolCall, value: unknown): unknown {
  const what = `The result of tool call '${call.id}' (${call.name})`;
  // JSON.stringify makes a whole result that is a function or a symbol `undefined` (kept as null):
  // almost always a tool that returned a function instead of calling it, so it is refused, not lost.
  if (typeof value === 'function' || typeof value === 'symbol') {
    throw new UnsavableValueError(what, '', `a ${typeof value} has no JSON form; return its result instead`);
  }
  return asJsonValue(value, what);
}
