import type { Hook } from '../hooks/hook';
import { checkedToolResult, checkedToolUseDecision } from '../hooks/tool-use-results';
import { AgentError } from '../state/agent-error';
import { AgentState } from '../state/agent-state';
import type { AgentStep } from '../state/agent-step';
import { AgentStopError } from '../state/agent-stop-error';
import { refusedArguments } from '../state/inference-admission';
import { asJsonValue } from '../state/json-value';
import { type ReportEvent, stepEventIds } from '../state/loop-events';
import type { ToolCall } from '../state/message';
import { ToolExecution } from '../state/tool-execution';
import type { ToolSet } from './define-tool';
import { runTool } from './run-tool';
import { toolResultMessage } from './tool-result-message';

export interface ToolExecutorOptions {
  readonly tools: ToolSet;
  readonly hooks: readonly Hook[];
  readonly signal: AbortSignal;
  /** Calls of one step run at most this many at a time. Default 8. */
  readonly concurrency?: number;
  /** Default timeout of one call in ms; none when unset. A tool's own `timeoutMs` wins. */
  readonly timeoutMs?: number;
  readonly report?: (event: ReportEvent) => void;
  /**
   * Told of each call's execution as it settles (`index` in the model's order), before the
   * afterToolUse hooks: a stop in the middle of the step keeps what had finished.
   */
  readonly onSettled?: (index: number, execution: ToolExecution) => void;
  /** The calls' idempotency keys are made in this scope (the run's session id); the agent's id without one. */
  readonly idempotencyScope?: string;
}

/**
 * The tool executor (seed 004's CanExecuteToolCalls): runs the tool calls the step in flight asked
 * for, as `runTools` does, and returns their ToolExecution records in the order the model asked for
 * them. A call whose subagent waits for decisions has no record yet; what hooks changed in the
 * state, and the step with its tool messages, are in `runTools`'s result.
 *
 * @example
 * const records = await executeTools(state, { tools: { add }, hooks: [], signal });
 * records[0]?.value();   // 5
 */
export async function executeTools(
  state: AgentState,
  options: ToolExecutorOptions,
): Promise<ToolExecution[]> {
  const done = await runTools(state, options);
  return [...(done.currentStep()?.toolExecutions() ?? [])];
}

/**
 * Runs the tool calls the step in flight asked for and returns the state with their
 * ToolExecutions and tool-result messages, in the order the model asked for them (seed 004's
 * CanUseTools: state in, state out; this is what the loop's `toolExecutor` worker runs).
 *
 * beforeToolUse hooks run first, call by call in the model's order (they may block a call, rewrite
 * its arguments or change the state); then the tools run in parallel, up to `concurrency` at a
 * time; then afterToolUse hooks run in the model's order. A failing call (unknown tool, invalid
 * arguments, a throw, a timeout, a block) fails alone and is reported to the model as the tool's
 * result; a hook that throws fails the run. An AgentStopError from a tool propagates once the other calls have settled.
 *
 * A subagent call whose child waits for decisions on its own tool calls leaves the step waiting:
 * the state returned keeps the finished calls' executions on the step and the waiting children in
 * its approval (`withSubagentsAwaiting`). Run again once the children's calls are decided, the
 * executor resumes those children (the subagent tool finds them in the approval) and runs only the
 * calls without a result yet.
 */
export async function runTools(state: AgentState, options: ToolExecutorOptions): Promise<AgentState> {
  const step = state.currentStep();
  if (step === null || !step.hasToolCalls()) return state;
  // `options.signal` is read only where it is used: it may be made on first read.
  const { hooks, report } = options;
  // the reports' ids, made only when someone takes reports
  const ids = report ? stepEventIds(state) : null;

  let current = state;
  // calls that finished before the step waited for a subagent keep their results
  const kept = new Map<string, ToolExecution>();
  for (const execution of step.toolExecutions()) kept.set(execution.toolCallId(), execution);
  // `settled`: a call that ends before it runs (a hook blocked it or gave arguments that cannot be kept).
  const planned: Array<{ call: ToolCall; startedAt: number; settled?: ToolExecution }> = [];
  // a subagent call whose child waited was started (reported, passed by the hooks) before it waited
  const resumed = state.approval()?.children ?? {};
  for (const requested of step.requestedToolCalls()) {
    if (kept.has(requested.id)) continue;
    const startedAt = Date.now();
    if (Object.hasOwn(resumed, requested.id)) {
      planned.push({ call: requested, startedAt });
      continue;
    }
    if (report && ids)
      report({
        type: 'tool.started',
        agentId: ids.agentId,
        parentAgentId: ids.parentAgentId,
        executionId: ids.executionId,
        stepNumber: ids.stepNumber,
        toolCallId: requested.id,
        toolName: requested.name,
        args: requested.args,
      });
    let call = requested;
    let settled: ToolExecution | undefined;
    for (const hook of hooks) {
      if (!hook.beforeToolUse) continue;
      const decision = checkedToolUseDecision(
        await hook.beforeToolUse(current, {
          get signal() {
            return options.signal;
          },
          toolCall: call,
        }),
        hook,
      );
      if (decision instanceof AgentState) {
        current = decision;
        continue;
      }
      const d = decision;
      if (d?.state) current = d.state;
      if (d?.args !== undefined) {
        // Arguments a hook writes enter the state like the model's: kept as JSON, or the call fails.
        try {
          call = Object.freeze({
            ...call,
            args: asJsonValue(d.args, `The arguments '${hook.name ?? 'a hook'}' gave`),
          });
        } catch (error) {
          settled = ToolExecution.failed(call, error, startedAt);
          reportFinished(report, ids, settled, startedAt);
          break;
        }
      }
      if (d?.block !== undefined) {
        settled = ToolExecution.blocked(call, d.block || `Blocked by hook '${hook.name ?? 'anonymous'}'`);
        reportFinished(report, ids, settled, startedAt);
        break;
      }
    }
    planned.push({ call, startedAt, settled });
  }

  const results: ToolExecution[] = new Array(planned.length);
  const waiting = new Map<string, AgentState>();
  let stop: AgentStopError | undefined;
  let next = 0;
  const toolState = current;
  // Each worker is an async loop over the planned calls (an anonymous one: the build's keepNames
  // makes a named closure a slow dictionary-mode object, and this runs at every tool step).
  const running: Promise<void>[] = [];
  const workers = Math.max(1, Math.min(options.concurrency ?? 8, planned.length));
  for (let w = 0; w < workers; w++)
    running.push(
      (async () => {
        while (next < planned.length) {
          const index = next++;
          const { call, startedAt, settled } = planned[index] as (typeof planned)[number];
          if (settled) {
            results[index] = settled;
            options.onSettled?.(index, settled);
            continue;
          }
          let execution: ToolExecution;
          const refusal = refusedArguments(step, call);
          if (refusal) execution = ToolExecution.failed(call, refusal, startedAt);
          else {
            try {
              const result = await runTool(call, toolState, options, startedAt);
              // a subagent whose child waits for decisions: the step waits with it
              if (result instanceof AgentState) {
                waiting.set(call.id, result);
                continue;
              }
              execution = result;
            } catch (error) {
              if (!AgentStopError.is(error)) throw error;
              stop ??= error;
              execution = ToolExecution.failed(call, error, startedAt);
            }
          }
          results[index] = execution;
          options.onSettled?.(index, execution);
          reportFinished(report, ids, execution, startedAt);
        }
      })(),
    );
  await (workers === 1 ? running[0] : Promise.all(running));

  for (let i = 0; i < results.length; i++) {
    if (results[i] === undefined) continue; // a subagent waiting for decisions
    for (const hook of hooks) {
      if (!hook.afterToolUse) continue;
      // a hook that throws fails the run (DESIGN), its error recorded on the step; the calls keep
      // their results (`onSettled` had them)
      const result = checkedToolResult(
        await hook.afterToolUse(current, {
          get signal() {
            return options.signal;
          },
          toolExecution: results[i] as ToolExecution,
        }),
        hook,
      );
      if (result instanceof AgentState) current = result;
      else if (result instanceof ToolExecution) results[i] = result;
    }
  }

  const inFlight = current.currentStep() ?? step;
  // every call planned and answered (none kept from before, none waiting): `results` is in the model's order
  const ordered = kept.size === 0 && waiting.size === 0 ? results : inModelOrder(step, kept, results);
  if (waiting.size > 0 && !stop) {
    // the tool messages are written once every call has its result
    return current
      .withCurrentStep(inFlight.withToolExecutions(ordered))
      .withSubagentsAwaiting(Object.fromEntries(waiting));
  }
  const messages = ordered.map((execution) => toolResultMessage(execution));
  const done = current
    .withCurrentStep(
      inFlight.withToolExecutions(ordered).withOutputMessages([...inFlight.outputMessages(), ...messages]),
    )
    .withApprovalCleared();
  if (stop) throw Object.assign(stop, { state: done.withPendingToolCallsFailed(stopped(stop)) });
  return done;
}

/** The executions of the step's calls in the model's order: those kept from before and the new ones. */
function inModelOrder(
  step: AgentStep,
  kept: ReadonlyMap<string, ToolExecution>,
  results: readonly (ToolExecution | undefined)[],
): ToolExecution[] {
  const byCall = new Map(kept);
  for (const execution of results) if (execution) byCall.set(execution.toolCallId(), execution);
  return step.requestedToolCalls().flatMap((call) => byCall.get(call.id) ?? []);
}

/** The reports are literals, not spreads of `ids`: a spread followed by keys gives each its own hidden class on Node 20. */
function reportFinished(
  report: ToolExecutorOptions['report'],
  ids: ReturnType<typeof stepEventIds> | null,
  execution: ToolExecution,
  startedAt: number,
): void {
  if (!report || !ids) return;
  const error = execution.error();
  report({
    type: 'tool.finished',
    agentId: ids.agentId,
    parentAgentId: ids.parentAgentId,
    executionId: ids.executionId,
    stepNumber: ids.stepNumber,
    toolCallId: execution.toolCallId(),
    toolName: execution.name(),
    ok: error === null,
    blocked: execution.wasBlocked(),
    error,
    value: error === null ? execution.value() : null,
    durationMs: execution.completedAt().getTime() - startedAt,
  });
}

/** The result of a call whose subagent still waited when a tool asked the run to stop. */
function stopped(stop: AgentStopError): AgentError {
  return AgentError.of('AgentStopError', stop.message, 'STOPPED_WHILE_AWAITING_APPROVAL');
}
