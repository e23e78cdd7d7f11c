/** One agent of a run as the viewer shows it: its steps, tools, path through the chart and events. */
import type { AppendOnlyList } from '../state/append-only-list';
import type { Message } from '../state/message';
import type { MessageTable } from './run-messages';
import type { AgentSource, AgentView, ErrorView, StepView, ToolView } from './run-view';
import type { Trace } from './trace-schema';
import { traceTiming } from './trace-timing';
import { clamp, errorView, ownUsage, pretty, usageView } from './view-helpers';

interface AgentContextArgs {
  readonly key: string;
  readonly depth: number;
  readonly parentKey: string | null;
  readonly childKeys: readonly string[];
  readonly keyOf: ReadonlyMap<string, string>;
  readonly messages: MessageTable;
  readonly trace: Trace | null;
  readonly sources: readonly AgentSource[];
}

export function agentView(source: AgentSource, args: AgentContextArgs): AgentView {
  const { state } = source;
  const execution = state.execution();
  const execStart = execution?.startedAtMs() ?? null;
  const signal = state.stopSignal();
  const timing = args.trace && source.actor ? traceTiming(args.trace, source.actor, state) : null;
  const conversation = state.messageList();
  const conversationBase = args.messages.addList(conversation);

  const steps: StepView[] = [];
  const records = state.stepExecutions();
  let previousInput: AppendOnlyList<Message> | null = null;
  let seenSignals = 0;
  const stepViews = records.map((record) => ({
    step: record.step(),
    start: record.startedAt().getTime(),
    end: record.completedAt().getTime(),
    signals: record.continuation().stopSignals,
    inFlight: false,
  }));
  const current = state.currentStep();
  if (current) {
    const started = execution?.currentStepStartedAt()?.getTime() ?? Date.now();
    stepViews.push({ step: current, start: started, end: Date.now(), signals: [], inFlight: true });
  }
  stepViews.forEach((item, index) => {
    const number = index + 1;
    const { step } = item;
    const inputList = step.inputMessageList();
    const input = args.messages.ranges(inputList, conversation, conversationBase);
    const newFrom = previousInput?.isPrefixOf(inputList) ? previousInput.size : 0;
    previousInput = inputList;
    const output = step.outputMessages().map((m) => args.messages.add(m));
    const durationMs = Math.max(0, item.end - item.start);
    const childOf = (toolName: string, callId: string) =>
      args.sources.find(
        (s) =>
          s.spawnedBy?.parentId === state.agentId() &&
          s.spawnedBy.stepNumber === number &&
          s.spawnedBy.toolName === toolName &&
          (s.spawnedBy.toolCallId === undefined || s.spawnedBy.toolCallId === callId),
      );
    const tools = step.toolExecutions().map((execution): ToolView => {
      const error = execution.error();
      const child = childOf(execution.name(), execution.toolCallId());
      return {
        callId: execution.toolCallId(),
        name: execution.name(),
        args: pretty(execution.args()),
        result: error ? null : pretty(execution.value()),
        error: error ? errorView(error, number, execution.name()) : null,
        blocked: execution.wasBlocked(),
        offsetMs: clamp(execution.startedAt().getTime() - item.start, 0, durationMs),
        durationMs: Math.max(0, execution.completedAt().getTime() - execution.startedAt().getTime()),
        childAgent: child ? (args.keyOf.get(child.state.agentId()) ?? null) : null,
        waiting: false,
        resolution: execution.resolution() ?? null,
      };
    });
    // the calls of a waiting step whose subagent waits for decisions: no result yet
    const waitingChildren = item.inFlight ? (state.approval()?.children ?? {}) : {};
    for (const call of step.requestedToolCalls()) {
      if (!Object.hasOwn(waitingChildren, call.id)) continue;
      const child = childOf(call.name, call.id);
      tools.push({
        callId: call.id,
        name: call.name,
        args: pretty(call.args),
        result: null,
        error: null,
        blocked: false,
        offsetMs: 0,
        durationMs: 0,
        childAgent: child ? (args.keyOf.get(child.state.agentId()) ?? null) : null,
        waiting: true,
        resolution: null,
      });
    }
    const measured = timing?.model.get(number);
    const firstTool = tools.length ? Math.min(...tools.map((t) => t.offsetMs)) : durationMs;
    const model = measured
      ? {
          offsetMs: clamp(measured.start + (timing?.epoch ?? 0) - item.start, 0, durationMs),
          durationMs: measured.duration,
          measured: true,
        }
      : { offsetMs: 0, durationMs: firstTool, measured: false };
    const newSignals = item.signals.slice(seenSignals);
    if (!item.inFlight) seenSignals = item.signals.length;
    steps.push({
      number,
      id: step.id(),
      type: item.inFlight ? 'in_flight' : step.stepType(),
      inFlight: item.inFlight,
      offsetMs: execStart === null ? 0 : Math.max(0, item.start - execStart),
      durationMs,
      model,
      finishReason: step.finishReason(),
      text: step.outputText(),
      usage: usageView(step.usage()),
      tools,
      errors: step.stepErrors().map((e) => errorView(e, number, null)),
      stopSignals: newSignals.map((s) => `${s.reason}: ${s.message}${s.source ? ` (${s.source})` : ''}`),
      compaction: timing?.compactions.get(number) ?? null,
      input,
      inputCount: inputList.size,
      newFrom,
      output,
    });
  });

  const errors: ErrorView[] = [];
  for (const step of steps) {
    errors.push(...step.errors);
    for (const tool of step.tools) if (tool.error) errors.push(tool.error);
  }
  const completedAt = execution?.completedAt()?.getTime() ?? null;
  const lastEnd = steps.length
    ? (execStart ?? 0) + Math.max(...steps.map((s) => s.offsetMs + s.durationMs))
    : null;
  const endMs = completedAt ?? lastEnd;
  const spawnedBy = source.spawnedBy
    ? { stepNumber: source.spawnedBy.stepNumber, toolName: source.spawnedBy.toolName }
    : null;

  return {
    key: args.key,
    agentId: state.agentId(),
    parentAgentId: state.parentAgentId(),
    parentKey: args.parentKey,
    childKeys: args.childKeys,
    depth: args.depth,
    spawnedBy,
    status: state.status(),
    stopReason: state.stopReason(),
    stopMessage: signal?.message ?? null,
    stopSource: signal?.source ?? null,
    executionId: state.executionId(),
    executionCount: state.executionCount(),
    startedAt: execStart === null ? null : new Date(execStart).toISOString(),
    durationMs: execStart === null || endMs === null ? null : Math.max(0, endMs - execStart),
    usage: usageView(state.usage()),
    ownUsage: usageView(ownUsage(state)),
    stepCount: state.stepCount(),
    systemPrompt: state.systemPrompt(),
    finalResponse: state.finalResponse(),
    pendingApprovals: state.pendingApprovals().map((p) => ({
      toolCallId: p.toolCallId,
      toolName: p.toolName,
      args: pretty(p.args),
      path: p.path ?? [],
      reason: p.reason,
    })),
    errors,
    steps,
    statePath: timing?.path ?? null,
    actorTree: timing?.actorTree ?? null,
    events: timing?.events ?? null,
  };
}
