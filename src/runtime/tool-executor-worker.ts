/**
 * The `toolExecutor` worker: runs the tool calls of one step per request (the agent's tools, an MCP
 * server's, its subagents bound to the agent), with its tool hooks, concurrency and timeout; the
 * calls that settle are kept aside (`SettledToolCalls`) so that a stop mid-step keeps their results.
 */

import type { Hook } from '../hooks/hook';
import type { McpServers } from '../mcp/mcp-servers';
import type { ReportEvent } from '../state/loop-events';
import type { ToolSet } from '../tools/define-tool';
import { runTools, type ToolExecutorOptions } from '../tools/tool-executor';
import type { AgentDefinition } from './agent-definition';
import { signedBy } from './approval-signature';
import { approvalDecisions } from './approvals';
import { reporterFor } from './report-delivery';
import type { SettledToolCalls } from './settled-tool-calls';
import { type RequestSignal, stepWorker } from './step-worker';
import type { SubagentCalls } from './subagent-calls';

export interface ToolExecutorParts {
  readonly definition: AgentDefinition;
  readonly tools: ToolSet;
  readonly mcp: McpServers | undefined;
  readonly subagents: SubagentCalls;
  readonly settled: SettledToolCalls;
  /**
   * Whether the agent carries out decisions on its calls: it has tools that need approval, or
   * unsafe ones (a crash may interrupt them; a rejected one is blocked).
   */
  readonly takesDecisions: boolean;
  /** The root's `approvalSecret`: a subagent call's child waiting for decisions has its calls signed. */
  readonly approvalSecret: string | undefined;
}

export function toolExecutorWorker(parts: ToolExecutorParts) {
  const { definition, tools, mcp, subagents, settled, approvalSecret } = parts;
  // Decisions are carried out only by agents that take them: no extra hook per call otherwise.
  const hooks = [
    ...(parts.takesDecisions ? [approvalDecisions] : []),
    ...(definition.hooks ?? []).filter((h) => h.beforeToolUse || h.afterToolUse),
  ];
  return stepWorker('toolExecutor', async ({ state }, worker, request) => {
    const { agent } = worker;
    const step = state.currentStep();
    const stepTools = mcp
      ? subagents.toolsFor(worker, await mcp.callableToolSet(tools, request.signal))
      : subagents.toolsFor(worker);
    const onSettled = settled.collect(agent, step);
    // a failure (a hook that threw) leaves the settled calls to the chart (`keepSettledToolCalls`)
    const done = await runTools(
      state,
      new StepToolOptions(request, {
        tools: stepTools,
        hooks,
        concurrency: definition.toolConcurrency,
        timeoutMs: definition.toolTimeoutMs,
        // a run no one listens to takes no reports: the tool executor then builds none
        report: worker.reports ? reporterFor(worker) : undefined,
        onSettled,
        idempotencyScope: worker.sessionId ?? state.agentId(),
      }),
    );
    settled.release(agent, step);
    // a subagent waiting for decisions leaves the step waiting: its calls are signed here
    return signedBy(approvalSecret, done, worker.sessionId);
  });
}

/**
 * The tool executor's options for one request: its signal is the request's, made only if a tool or
 * hook reads it. A getter on a class, not in an object literal: a literal with an accessor is a
 * slow dictionary-mode object, made at every tool step.
 */
class StepToolOptions implements ToolExecutorOptions {
  readonly tools: ToolSet;
  readonly hooks: readonly Hook[];
  readonly concurrency: number | undefined;
  readonly timeoutMs: number | undefined;
  readonly report: ((event: ReportEvent) => void) | undefined;
  readonly onSettled: ToolExecutorOptions['onSettled'];
  readonly idempotencyScope: string | undefined;

  constructor(
    private readonly request: RequestSignal,
    options: Omit<ToolExecutorOptions, 'signal'>,
  ) {
    this.tools = options.tools;
    this.hooks = options.hooks;
    this.concurrency = options.concurrency;
    this.timeoutMs = options.timeoutMs;
    this.report = options.report;
    this.onSettled = options.onSettled;
    this.idempotencyScope = options.idempotencyScope;
  }

  get signal(): AbortSignal {
    return this.request.signal;
  }
}
