/**
 * The loop's actors and runtime actions for one agent: the chart (`agentLoop`) with its workers
 * provided (`hooks`, `driver`, `toolExecutor`, `checkpoint`), the built-in after-step guards (the
 * chart's step check), and `spawnSubagent`.
 */
import { type AnyActorLogic, type AnyActorRef, assign, type SnapshotFrom } from 'xstate';
import {
  agentLoop,
  type CheckpointRequest,
  type HooksRequest,
  type LoopContext,
  type LoopInput,
  type LoopSession,
  StateId,
  type StepCheck,
  statePath,
  subagentActor,
} from '../../machines/agentLoop';
import type { Driver, DriverContext } from '../drivers/driver';
import { errorPolicy } from '../hooks/error-policy';
import { finishReasonGuard } from '../hooks/finish-reason-guard';
import type { Hook } from '../hooks/hook';
import { hooksFor, isPromise, runStage } from '../hooks/hook-stack';
import { structuredOutputGuard } from '../hooks/structured-output-guard';
import type { BudgetLedger, LedgerRun } from '../ledger/budget-ledger';
import type { McpServers } from '../mcp/mcp-servers';
import { NoSessionStoreError } from '../persistence/errors';
import type { SessionStore } from '../persistence/session-store';
import type { AgentState } from '../state/agent-state';
import type { HookStage } from '../state/hook-stage';
import { admitInference } from '../state/inference-admission';
import type { ReportEvent } from '../state/loop-events';
import { type ToolSet, toolEffect } from '../tools/define-tool';
import { runTools, type ToolExecutorOptions } from '../tools/tool-executor';
import type { AgentDefinition } from './agent-definition';
import { withSignedApprovals } from './approval-signature';
import { approvalDecisions, requestApprovals, unsafeCallsToStart } from './approvals';
import { NestedIntents } from './nested-intents';
import { deliverReport } from './report-delivery';
import { SettledToolCalls } from './settled-tool-calls';
import { type RequestSignal, stepWorker } from './step-worker';
import type { SubagentCalls } from './subagent-calls';

export interface ProvidedLoop {
  /** The chart with this agent's actors provided. */
  readonly machine: typeof agentLoop;
  /** The hook stages the agent has hooks for (the others are passed without the hooks worker). */
  readonly hookStages: readonly HookStage[];
  /** The agent's built-in after-step guards, as the chart's step check (`LoopInput.checkStep`). */
  readonly checkStep: StepCheck;
}

export function provideLoop(
  definition: AgentDefinition,
  parts: {
    readonly driver: Driver;
    readonly tools: ToolSet;
    readonly store: SessionStore | undefined;
    readonly subagents: SubagentCalls;
    /** MCP servers whose tools join the agent's (they start at the first model call). */
    readonly mcp: McpServers | undefined;
    /** The root's `approvalSecret`: its pending approvals are signed (children's are signed by the root). */
    readonly approvalSecret?: string;
    /** The budget ledger the runs' model calls charge (the run's `ledgerScopes`). */
    readonly ledger?: BudgetLedger;
  },
): ProvidedLoop {
  const { driver, tools, store, subagents, mcp, approvalSecret, ledger } = parts;
  const userHooks = definition.hooks ?? [];
  const stages: Record<HookStage, Hook[]> = {
    beforeExecution: hooksFor(userHooks, 'beforeExecution'),
    beforeStep: hooksFor(userHooks, 'beforeStep'),
    afterStep: hooksFor(userHooks, 'afterStep'),
    afterExecution: hooksFor(userHooks, 'afterExecution'),
    onError: hooksFor(userHooks, 'onError'),
  };
  const hookStages = (Object.keys(stages) as HookStage[]).filter((stage) => stages[stage].length > 0);
  // Built-in guards are synchronous: they run inside the machine's actions, at no actor's cost.
  const afterStepGuards = [
    ...(definition.responseFormat ? [structuredOutputGuard(definition.responseFormat)] : []),
    ...(definition.finishReasons?.length ? [finishReasonGuard(definition.finishReasons)] : []),
    errorPolicy(definition.errorPolicy),
  ];
  // Decisions are carried out only by agents that have tools needing approval: no extra hook per
  // call otherwise. An MCP server's tools are known once it runs: any of them may need approval.
  const needsApprovals =
    mcp !== undefined ||
    Object.values(tools).some((tool) => tool.needsApproval !== undefined && tool.needsApproval !== false);
  // an unsafe call a crash interrupted waits for a decision too (a rejected one is blocked here)
  const hasUnsafeTools = Object.values(tools).some((tool) => toolEffect(tool) === 'unsafe');
  const takesDecisions = needsApprovals || hasUnsafeTools;
  const toolHooks = [
    ...(takesDecisions ? [approvalDecisions] : []),
    ...userHooks.filter((h) => h.beforeToolUse || h.afterToolUse),
  ];
  const signed = (state: AgentState, self: AnyActorRef) => {
    if (!approvalSecret || state.approval() === null) return state;
    const session = (self.getSnapshot() as { context: LoopContext }).context.session;
    return withSignedApprovals(state, approvalSecret, session?.id ?? null);
  };
  // Reports after the run ended (an aborted tool settling late) have no one to go to; the chart
  // takes them in `inProgress` only.
  const reporter = (self: AnyActorRef) => (event: ReportEvent) => {
    const snapshot = self.getSnapshot() as SnapshotFrom<typeof agentLoop>;
    if (snapshot.status === 'active' && snapshot.context.reports && inProgress(snapshot.value))
      deliverReport(self, event);
  };

  const settled = new SettledToolCalls();
  // An MCP tool's effect is known once its server listed it: a call to a tool not known yet may be unsafe.
  const mayStartUnsafe = (state: AgentState) => {
    const known = mcp?.knownToolSet(tools) ?? tools;
    return unsafeCallsToStart(state, known, mcp !== undefined).length > 0;
  };
  // the unsafe calls of a step that start now: its intent names them before any starts
  const unsafeStarting = async (state: AgentState, signal: AbortSignal) =>
    unsafeCallsToStart(state, mcp ? await mcp.callableToolSet(tools, signal) : tools);
  /**
   * What the root saves: with an `approvalSecret`, every call a load may list (pending, or about to
   * start and so interrupted by a crash) signed, so the stored session lists them signed.
   */
  const sealed = (state: AgentState, sessionId: string) =>
    approvalSecret && state.approval() !== null
      ? withSignedApprovals(state, approvalSecret, sessionId)
      : state;
  const nested = new NestedIntents(store, (state) => unsafeStarting(state, noSignal), sealed);
  /** Saves `state` in the session, over the version last saved (or a child's intent saved meanwhile). */
  const saveState = (session: LoopSession, state: AgentState): Promise<number> => {
    if (!store) throw new NoSessionStoreError('Checkpointing');
    const { id } = session;
    const saved = sealed(state, id);
    const version = nested.versionFor(id, session.version);
    return isPromise(version)
      ? version.then((v) => store.save(id, saved, v))
      : store.save(id, saved, version);
  };
  /**
   * The step with the unsafe calls it starts now, saved before any starts (null: it starts none,
   * nothing is saved); a subagent (no session) hands it to its caller, up to the root's session.
   */
  const saveIntent = async (
    { state, session }: CheckpointRequest,
    self: AnyActorRef,
    signal: AbortSignal,
  ): Promise<number | null> => {
    const starting = await unsafeStarting(state, signal);
    if (starting.length === 0) return null;
    const intent = state.withToolsStarting(starting);
    if (session) return saveState(session, intent);
    await contextOf(self).intentSave?.(intent);
    return null;
  };
  const machine = agentLoop.provide({
    guards: {
      // no unsafe tool and no MCP server: no step starts one, and `intent` passes at no cost
      startsUnsafeCalls: ({ context }) =>
        (hasUnsafeTools || mcp !== undefined) && mayStartUnsafe(context.state),
    },
    actions: {
      // An agent without hooks has no hooks worker: nothing to start or stop (each costs a snapshot).
      ...(hookStages.length === 0 && { startHooksWorker: () => {}, stopHooksWorker: () => {} }),
      keepSettledToolCalls: assign({ state: ({ context, self }) => settled.keep(self, context.state) }),
      spawnSubagent: assign(({ context, event, spawn, self }) => {
        if (event.type !== 'subagent.spawn') return {};
        const child = subagents.childAgent(event.name);
        // spawned by the name it is registered under (below): subagent names are the definition's, not the chart's
        const spawnByName = spawn as unknown as (
          src: string,
          options: { id: string; input: LoopInput },
        ) => void;
        // the child saves the intent of its steps through this agent, up to the root's session
        const saves = context.session !== null || context.intentSave !== null;
        const intentSave = saves ? nested.saverFor(self, event.toolCallId) : undefined;
        // seen as its caller is: an inspector of the caller's system sees the child's states
        const input = child.inputFor(event.state, {
          budget: event.budget,
          reports: context.reports,
          intentSave,
          observed: context.observed,
          ledgerScopes: context.ledgerScopes,
        });
        spawnByName(subagentActor(event.name), { id: event.id, input });
        return {};
      }),
    },
    actors: {
      // The signals are getters: a request's AbortController is made only if its work reads it.
      hooks: stepWorker<HooksRequest>('hooks', ({ stage, state, error }, _agent, request) =>
        runStage(stages[stage], stage, state, {
          get signal() {
            return request.signal;
          },
          ...(error && { error }),
        }),
      ),
      driver: stepWorker('driver', async ({ state }, self, request) => {
        // A plain object (an accessor would make it a slow dictionary-mode one): model calls take
        // the signal anyway, so it is made here.
        const offered = mcp ? await mcp.toolSet(tools, request.signal) : tools;
        const context: DriverContext = {
          signal: request.signal,
          tools: subagents.toolsFor(self, offered),
          report: reporter(self),
          run: self,
          ledger: ledger && ledgerRun(ledger, contextOf(self).ledgerScopes),
        };
        const answered = admitInference(await driver.infer(state, context), driver.name);
        return needsApprovals ? signed(await requestApprovals(answered, offered), self) : answered;
      }),
      // One worker per execution, not a promise actor invoked per save: the actor, its start and
      // its snapshots cost more than the memory store's save itself (issue 38).
      checkpoint: stepWorker<CheckpointRequest, number | null>('checkpoint', (request, self, signal) =>
        request.intent
          ? saveIntent(request, self, signal.signal)
          : saveState(request.session as LoopSession, request.state),
      ),
      toolExecutor: stepWorker('toolExecutor', async ({ state }, self, request) => {
        const step = state.currentStep();
        const stepTools = mcp
          ? subagents.toolsFor(self, await mcp.callableToolSet(tools, request.signal))
          : subagents.toolsFor(self);
        const onSettled = settled.collect(self, step);
        // a failure (a hook that threw) leaves the settled calls to the chart (`keepSettledToolCalls`)
        const done = await runTools(
          state,
          new StepToolOptions(request, {
            tools: stepTools,
            hooks: toolHooks,
            concurrency: definition.toolConcurrency,
            timeoutMs: definition.toolTimeoutMs,
            // a run no one listens to takes no reports: the tool executor then builds none
            report: reportsOf(self) ? reporter(self) : undefined,
            onSettled,
            idempotencyScope: sessionOf(self)?.id ?? state.agentId(),
          }),
        );
        settled.release(self, step);
        // a subagent waiting for decisions leaves the step waiting: its calls are signed here
        return approvalSecret ? signed(done, self) : done;
      }),
    },
  });
  // The built-in after-step guards are synchronous: the chart runs them in the action that records the step.
  const checkStep = (state: AgentState) =>
    runStage(afterStepGuards, 'afterStep', state, { signal: noSignal }) as AgentState;
  registerSubagents(machine, subagents);
  return { machine, hookStages, checkStep };
}

/**
 * Registers each subagent's machine on `machine` as the actor `subagent:<name>` (DESIGN: every
 * actor registered by name; an inline one cannot be restored). A getter: the child agent is built
 * when its name is first looked up (a spawn, a restore), since a definition may list itself.
 */
function registerSubagents(machine: typeof agentLoop, subagents: SubagentCalls): void {
  const actors = machine.implementations.actors as Record<string, AnyActorLogic>;
  for (const name of subagents.names())
    Object.defineProperty(actors, subagentActor(name), {
      get: () => subagents.childAgent(name).machine,
      enumerable: true,
      configurable: true,
    });
}

const noSignal = new AbortController().signal;

const IN_PROGRESS = statePath(StateId.inProgress);

/**
 * `snapshot.matches('inProgress')`, without parsing the path at every report: a top-level state
 * other than `inProgress` is atomic, so its value is a string.
 */
const inProgress = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && Object.hasOwn(value, IN_PROGRESS);

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

/** The run's ledger and the scopes it charges; none without scopes. */
const ledgerRun = (ledger: BudgetLedger, scopes: readonly string[]): LedgerRun | undefined =>
  scopes.length === 0 ? undefined : { ledger, scopes };

const contextOf = (self: AnyActorRef) => (self.getSnapshot() as { context: LoopContext }).context;

/** The agent actor's session (null without a store): the scope of its calls' idempotency keys. */
const sessionOf = (self: AnyActorRef) => contextOf(self).session;

/** Whether the agent actor's run reports tool and text events (someone can listen: `LoopContext.reports`). */
const reportsOf = (self: AnyActorRef) => contextOf(self).reports;
