import {
  type Actor,
  type ActorOptions,
  type AnyActorLogic,
  type AnyActorRef,
  assign,
  createActor,
  fromPromise,
  type InspectionEvent,
} from 'xstate';
import { z } from 'zod';
import {
  agentLoop,
  type CheckpointInput,
  type HooksRequest,
  type LoopContext,
  type LoopInput,
  type LoopSession,
} from '../../machines/agentLoop';
import type { Driver, DriverContext } from '../drivers/driver';
import { modelDriver } from '../drivers/model-driver';
import { errorPolicy } from '../hooks/error-policy';
import { finishReasonGuard } from '../hooks/finish-reason-guard';
import type { Hook, StageName } from '../hooks/hook';
import { hooksFor, runStage } from '../hooks/hook-stack';
import { type ResponseSchema, structuredOutputGuard } from '../hooks/structured-output-guard';
import { NoSessionStoreError, SessionNotFoundError } from '../persistence/errors';
import type { ResponseFormat } from '../state/agent-context';
import { AgentState } from '../state/agent-state';
import { type ApprovalDecision, ApprovalError } from '../state/approval';
import { AgentMachineError } from '../state/errors';
import { ExecutionBudget } from '../state/execution-budget';
import type { AgentEvent, ReportEvent } from '../state/loop-events';
import { DEFAULT_MAX_DEPTH } from '../subagents/subagent-definition';
import { subagentTool } from '../subagents/subagent-tool';
import { type Tool, type ToolSet, validateInput } from '../tools/define-tool';
import { executeTools } from '../tools/tool-executor';
import { type AgentDefinition, checkDefinition, type SubagentDefinition } from './agent-definition';
import { stepWorker } from './step-worker';

export type AgentActor = Actor<typeof agentLoop>;

export interface CreateActorOptions {
  /** An inspection observer: `@statelyai/inspect`'s `inspector.inspect`, or a function. */
  readonly inspect?: ActorOptions<typeof agentLoop>['inspect'];
  readonly id?: string;
  readonly systemId?: string;
  /** Run on this budget instead of the definition's. */
  readonly budget?: ExecutionBudget;
  /** An actor of yours to be this agent's parent: it joins that actor's system and inspector tree. */
  readonly parent?: AnyActorRef;
  /** Checkpoint to the agent's store under this session, whose stored version is `version`. */
  readonly session?: LoopSession;
  /** XState's clock for delayed transitions (the approval timeout); `SimulatedClock` in tests. */
  readonly clock?: ActorOptions<typeof agentLoop>['clock'];
}

export interface ExecuteOptions extends Omit<CreateActorOptions, 'session'> {
  /** Aborting ends the run promptly: Stopped with UserRequested, completed steps kept. */
  readonly signal?: AbortSignal;
  /**
   * Checkpoint the run to the agent's store under this id: at the start, after every recorded
   * step and at the end. An existing session is continued from its stored version.
   */
  readonly sessionId?: string;
  /** Receives every event the run emits (steps, tool calls, text deltas, approvals, ...). */
  readonly onEvent?: (event: AgentEvent) => void;
}

/** An actor error the run could not record (a bug, or a hook returning something else). */
export class AgentRuntimeError extends AgentMachineError {
  constructor(
    message: string,
    readonly state: AgentState,
    options?: { cause?: unknown },
  ) {
    super('AGENT_RUNTIME', message, options);
  }
}

export interface Agent {
  readonly definition: AgentDefinition;
  readonly budget: ExecutionBudget;
  /** The loop machine with this agent's actors provided. */
  readonly machine: typeof agentLoop;
  /** Depth in a tree of agents: 0 for an agent made by `createAgent`. */
  readonly depth: number;
  /** Runs one execution of `state` and resolves with the final state. */
  execute(state: AgentState, options?: ExecuteOptions): Promise<AgentState>;
  /**
   * One turn of a stored conversation: loads the session (or starts it), adds the user's message
   * and runs the next execution, checkpointing under `sessionId`. A session waiting for approval
   * refuses the message (ApprovalError, APPROVAL_PENDING): decide first.
   */
  chat(sessionId: string, text: string, options?: Omit<ExecuteOptions, 'sessionId'>): Promise<AgentState>;
  /**
   * Continues a session's execution from its last checkpoint (completed steps and their tool
   * calls are not repeated; only the step in flight at a crash runs again). A session whose
   * execution already ended is returned as it is.
   */
  resume(sessionId: string, options?: Omit<ExecuteOptions, 'sessionId'>): Promise<AgentState>;
  /**
   * Delivers a person's decisions on tool calls awaiting approval (`state.pendingApprovals()`) and
   * continues the run: approved calls execute, edited ones with the new (validated) input,
   * rejected ones are recorded as blocked with the reason, which the model is told. `target` is
   * the state `execute` returned, or a session id whose checkpoint awaits approval. Raises
   * ApprovalError for an id that is not pending or an edit the tool's schema refuses; nothing runs
   * twice. Resolves like `execute`: at the outcome, or waiting again if calls are left undecided.
   */
  decide(
    target: AgentState | string,
    decisions: readonly ApprovalInput[],
    options?: Omit<ExecuteOptions, 'sessionId'>,
  ): Promise<AgentState>;
  /** The machine input for a run of `state` (its budget: the definition's unless given). */
  inputFor(state: AgentState, budget?: ExecutionBudget, session?: LoopSession): LoopInput;
  /** The XState actor (not started): starts in `pending`; send `execute`, `user.message`, `stop`. */
  createActor(state: AgentState, options?: CreateActorOptions): AgentActor;
}

/** Where an agent sits in a tree of agents, and what it inherits from its caller. */
interface Scope {
  readonly depth: number;
  readonly maxDepth: number;
  readonly driver?: Driver;
  readonly tools?: ToolSet;
  readonly subagents?: Readonly<Record<string, SubagentDefinition>>;
}

/**
 * Builds an agent from its definition: the loop machine with the driver, tool executor and hooks
 * provided as its actors.
 *
 * @example
 * const agent = createAgent({ model, tools: { add }, budget: new ExecutionBudget({ maxSteps: 10 }) });
 * const done = await agent.execute(AgentState.empty().withUserMessage('What is 2 + 3?'));
 * done.finalResponse(); // '5'
 */
export function createAgent(definition: AgentDefinition): Agent {
  checkDefinition(definition);
  return buildAgent(definition, { depth: 0, maxDepth: definition.subagents?.maxDepth ?? DEFAULT_MAX_DEPTH });
}

function buildAgent(definition: AgentDefinition, scope: Scope): Agent {
  const budget = definition.budget ?? ExecutionBudget.default();
  const store = definition.store;
  const driver: Driver =
    definition.driver ??
    (definition.model
      ? modelDriver(definition.model, { ...definition.modelOptions, ...contextOf(definition) })
      : (scope.driver as Driver));
  const tools = definition.tools ?? scope.tools ?? {};
  const subagents = definition.subagents?.agents ?? scope.subagents ?? {};
  const subagentNames = new Set(Object.keys(subagents));
  const userHooks = definition.hooks ?? [];
  const stages: Record<StageName, Hook[]> = {
    beforeExecution: hooksFor(userHooks, 'beforeExecution'),
    beforeStep: hooksFor(userHooks, 'beforeStep'),
    afterStep: hooksFor(userHooks, 'afterStep'),
    afterExecution: hooksFor(userHooks, 'afterExecution'),
    onError: hooksFor(userHooks, 'onError'),
  };
  const hookStages = (Object.keys(stages) as StageName[]).filter((stage) => stages[stage].length > 0);
  // Built-in guards are synchronous: they run inside the machine's actions, at no actor's cost.
  const afterStepGuards = [
    ...(definition.responseFormat ? [structuredOutputGuard(definition.responseFormat)] : []),
    ...(definition.finishReasons?.length ? [finishReasonGuard(definition.finishReasons)] : []),
    errorPolicy(definition.errorPolicy),
  ];
  // Decisions are carried out only by agents that have tools needing approval: no extra hook per call otherwise.
  const needsApprovals = Object.values(tools).some(
    (tool) => tool.needsApproval !== undefined && tool.needsApproval !== false,
  );
  const toolHooks = [
    ...(needsApprovals ? [approvalDecisions] : []),
    ...userHooks.filter((h) => h.beforeToolUse || h.afterToolUse),
  ];
  // Reports after the run ended (an aborted tool settling late) have no one to go to.
  const reporter = (self: AnyActorRef) => (event: ReportEvent) => {
    const snapshot = self.getSnapshot() as { status: string; context: LoopContext };
    if (snapshot.status === 'active' && snapshot.context.reports) self.send(event);
  };

  // Subagents are built on first call (a definition may list itself) and then reused.
  const children = new Map<string, Agent>();
  const childAgent = (name: string): Agent => {
    let child = children.get(name);
    if (!child) {
      child = buildAgent(subagents[name] as SubagentDefinition, {
        depth: scope.depth + 1,
        maxDepth: scope.maxDepth,
        driver,
        tools,
        subagents,
      });
      children.set(name, child);
    }
    return child;
  };
  /** The tools of one tool step: the agent's own, and its subagents bound to the calling actor. */
  const toolsFor = (self: AnyActorRef): ToolSet => {
    if (subagentNames.size === 0) return tools;
    const bound: Record<string, Tool> = { ...tools };
    for (const name of subagentNames) {
      const definitionOf = subagents[name] as SubagentDefinition;
      bound[name] = subagentTool({
        name,
        description: definitionOf.description,
        depth: scope.depth + 1,
        maxDepth: scope.maxDepth,
        callerBudget: () => (self.getSnapshot() as { context: LoopContext }).context.budget,
        childBudget: definitionOf.budget ?? ExecutionBudget.default(),
        subagentNames,
        run: (state, { signal, budget: childBudget, toolCallId }) => {
          const id = `subagent:${name}:${toolCallId}`;
          self.send({ type: 'subagent.spawn', id, name, state, budget: childBudget });
          const child = (self.getSnapshot() as { children: Record<string, AgentActor | undefined> }).children[
            id
          ];
          if (!child)
            throw new Error(`Subagent '${name}' could not be spawned: its caller is not running tools`);
          return awaitOutcome(child, signal).finally(() => self.send({ type: 'subagent.release', id }));
        },
      });
    }
    return bound;
  };

  const machine = agentLoop.provide({
    actions: {
      spawnSubagent: assign(({ context, event, spawn }) => {
        if (event.type !== 'subagent.spawn') return {};
        const child = childAgent(event.name);
        // A child agent's machine is logic of its own, not one of this machine's named actors.
        const spawnLogic = spawn as unknown as (
          logic: AnyActorLogic,
          options: { id: string; input: LoopInput },
        ) => void;
        const input = { ...child.inputFor(event.state, event.budget), reports: context.reports };
        spawnLogic(child.machine, { id: event.id, input });
        return {};
      }),
      // The built-in after-step guards are synchronous: they run in the action that records the step.
      recordStep: assign({
        state: ({ context }) => {
          const guarded = runStage(afterStepGuards, 'afterStep', context.state, { signal: noSignal });
          return (guarded as AgentState).withCurrentStepRecorded(Date.now());
        },
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
        const context: DriverContext = {
          get signal() {
            return request.signal;
          },
          tools: toolsFor(self),
          report: reporter(self),
          run: self,
        };
        const answered = await driver.infer(state, context);
        return needsApprovals ? requestApprovals(answered, tools) : answered;
      }),
      checkpoint: fromPromise<number, CheckpointInput>(({ input }) => {
        if (!store) throw new NoSessionStoreError('Checkpointing');
        return store.save(input.session.id, input.state, input.session.version);
      }),
      toolExecutor: stepWorker('toolExecutor', async ({ state }, self, request) => {
        const done = await executeTools(state, {
          tools: toolsFor(self),
          hooks: toolHooks,
          get signal() {
            return request.signal;
          },
          concurrency: definition.toolConcurrency,
          timeoutMs: definition.toolTimeoutMs,
          report: reporter(self),
        });
        return done.withApprovalCleared();
      }),
    },
  });

  const responseFormat = definition.responseFormat && jsonResponseFormat(definition.responseFormat);
  const prepare = (state: AgentState) => {
    let prepared = state;
    if (definition.systemPrompt && prepared.systemPrompt() === '') {
      prepared = prepared.withSystemPrompt(definition.systemPrompt);
    }
    if (responseFormat && prepared.responseFormat().type === 'text') {
      prepared = prepared.withResponseFormat(responseFormat);
    }
    return prepared;
  };

  const agent: Agent = {
    definition,
    budget,
    machine,
    depth: scope.depth,
    inputFor: (state, runBudget, session) => ({
      state: prepare(state),
      hookStages,
      budget: runBudget ?? budget,
      session: session ?? null,
    }),
    createActor(state, options = {}) {
      const { budget: runBudget, session, reports, ...actorOptions } = options as InternalActorOptions;
      if (session && !store) throw new NoSessionStoreError('A session');
      const input = { ...agent.inputFor(state, runBudget, session), reports: reports ?? true };
      return createActor(machine, { input, ...actorOptions });
    },
    async execute(state, options = {}) {
      if (state.approval()) throw approvalPending(state);
      const { signal, sessionId, onEvent, ...actorOptions } = options;
      if (sessionId === undefined)
        return runToOutcome(agent.createActor(state, listened(actorOptions, onEvent)), signal, onEvent);
      if (!store) throw new NoSessionStoreError('execute(state, { sessionId })');
      const stored = await store.load(sessionId);
      // The started execution is saved first, so a crash in the first step can be resumed.
      const started = prepare(state).withExecutionStarted();
      const version = await store.save(sessionId, started, stored?.version ?? null);
      return runToOutcome(
        agent.createActor(started, {
          ...listened(actorOptions, onEvent),
          session: { id: sessionId, version },
        }),
        signal,
        onEvent,
      );
    },
    async decide(target, decisions, options = {}) {
      const { signal, onEvent, ...actorOptions } = options;
      let stored: { state: AgentState; version: number } | null = null;
      if (typeof target === 'string') {
        if (!store) throw new NoSessionStoreError('decide(sessionId, ...)');
        stored = await store.load(target);
        if (!stored) throw new SessionNotFoundError(target);
      }
      let state = stored?.state ?? (target as AgentState);
      for (const decision of decisions) {
        if (decision.type === 'edit') await checkEdit(state, decision.toolCallId, decision.args, tools);
        const { toolCallId, ...rest } = decision;
        state = state.withApprovalDecision(toolCallId, rest as ApprovalDecision);
      }
      const session =
        typeof target === 'string' ? { id: target, version: stored?.version ?? null } : undefined;
      return runToOutcome(
        agent.createActor(state, { ...listened(actorOptions, onEvent), session }),
        signal,
        onEvent,
      );
    },
    async chat(sessionId, text, options = {}) {
      if (!store) throw new NoSessionStoreError('chat(sessionId, text)');
      const stored = await store.load(sessionId);
      const state = stored?.state ?? AgentState.empty();
      if (state.approval()) throw approvalPending(state);
      return agent.execute(state.withUserMessage(text), { ...options, sessionId });
    },
    async resume(sessionId, options = {}) {
      if (!store) throw new NoSessionStoreError('resume(sessionId)');
      const stored = await store.load(sessionId);
      if (!stored) throw new SessionNotFoundError(sessionId);
      const status = stored.state.status();
      if (status !== 'in_progress' && status !== 'pending') return stored.state;
      const { signal, onEvent, ...actorOptions } = options;
      const session = { id: sessionId, version: stored.version };
      return runToOutcome(
        agent.createActor(stored.state, { ...listened(actorOptions, onEvent), session }),
        signal,
        onEvent,
      );
    },
  };
  return agent;
}

const noSignal = new AbortController().signal;

const contextOf = (definition: AgentDefinition) =>
  definition.context !== undefined ? { context: definition.context } : {};

function jsonResponseFormat(schema: ResponseSchema): ResponseFormat {
  if (!(schema instanceof z.ZodType)) return { type: 'json' };
  return { type: 'json', schema: z.toJSONSchema(schema, { target: 'draft-7' }) as Record<string, unknown> };
}

/** A decision as `agent.decide()` takes it. */
export type ApprovalInput = { readonly toolCallId: string } & ApprovalDecision;

/** Marks the calls of a new step whose tools need a person's approval. */
async function requestApprovals(state: AgentState, tools: ToolSet): Promise<AgentState> {
  const step = state.currentStep();
  if (!step?.hasToolCalls()) return state;
  const ids: string[] = [];
  for (const call of step.requestedToolCalls()) {
    const rule = Object.hasOwn(tools, call.name) ? tools[call.name]?.needsApproval : undefined;
    const needed =
      typeof rule === 'function'
        ? await rule(call.args, { toolCallId: call.id, state, messages: [...state.messages()], context: {} })
        : rule === true;
    if (needed) ids.push(call.id);
  }
  return ids.length ? state.withApprovalRequested(ids) : state;
}

/** Carries out a person's decisions when the approved step's tools run. */
const approvalDecisions: Hook = {
  name: 'approvalDecisions',
  beforeToolUse: (state, { toolCall }) => {
    const decision = state.approval()?.decisions[toolCall.id];
    if (decision?.type === 'reject') {
      return { block: `Rejected by a person${decision.reason ? `: ${decision.reason}` : ''}` };
    }
    if (decision?.type === 'edit') return { args: decision.args };
    return undefined;
  },
};

async function checkEdit(
  state: AgentState,
  toolCallId: string,
  args: unknown,
  tools: ToolSet,
): Promise<void> {
  const call = state
    .currentStep()
    ?.requestedToolCalls()
    .find((c) => c.id === toolCallId);
  const tool = call && Object.hasOwn(tools, call.name) ? tools[call.name] : undefined;
  if (!call || !tool) return; // withApprovalDecision reports the id as not pending
  const result = await validateInput(tool.inputSchema, args);
  if (!result.ok) {
    throw new ApprovalError(
      'APPROVAL_INVALID_EDIT',
      `Edited input for tool call '${toolCallId}' (${call.name}) is invalid: ${result.issues.join('; ')}; nothing was changed.`,
      toolCallId,
    );
  }
}

function approvalPending(state: AgentState): ApprovalError {
  const pending = state.pendingApprovals().map((p) => p.toolCallId);
  return new ApprovalError(
    'APPROVAL_PENDING',
    `The run waits for approval of ${pending.join(', ') || 'its tool calls'}: deliver the decisions with agent.decide(state, decisions) before a new message or execution.`,
  );
}

const outcomes = new Set(['completed', 'stopped', 'failed']);

/** The run rests: at an outcome, or waiting for approval. Reads the value (cheaper than `matches`). */
function isResting(value: unknown): boolean {
  if (typeof value === 'string') return outcomes.has(value);
  const step = (value as { inProgress?: { step?: { awaitingApproval?: string } } }).inProgress?.step;
  return typeof step === 'object' && step?.awaitingApproval === 'waiting';
}

/** Starts the actor, sends `execute`, resolves with the state at its outcome, and stops the actor. */
/** Options of the runtime's own actors: `reports: false` when no one can listen. */
interface InternalActorOptions extends CreateActorOptions {
  readonly reports?: boolean;
}

/** Nobody can listen to an actor that execute() keeps to itself, unless it is inspected or onEvent is given. */
function listened(options: { inspect?: unknown }, onEvent: unknown): InternalActorOptions {
  return {
    ...(options as CreateActorOptions),
    reports: options.inspect !== undefined || onEvent !== undefined,
  };
}

function runToOutcome(
  actor: AgentActor,
  signal: AbortSignal | undefined,
  onEvent?: (event: AgentEvent) => void,
): Promise<AgentState> {
  if (onEvent) actor.on('*', (event) => onEvent(event as AgentEvent));
  const outcome = awaitOutcome(actor, signal);
  actor.start();
  return outcome.finally(() => actor.stop());
}

/**
 * Sends `execute` to a started (or about to start) agent actor and resolves with its state once it
 * reaches an outcome; aborting `signal` sends `stop`. An actor error rejects with AgentRuntimeError.
 */
function awaitOutcome(actor: AgentActor, signal: AbortSignal | undefined): Promise<AgentState> {
  return new Promise<AgentState>((resolve, reject) => {
    let settled = false;
    const onAbort = () => actor.send({ type: 'stop', reason: abortReason(signal) });
    const finish = (outcome: () => void) => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      subscription.unsubscribe();
      outcome();
    };
    const subscription = actor.subscribe({
      next: (snapshot) => {
        if (isResting(snapshot.value)) {
          finish(() => resolve(snapshot.context.state));
        }
      },
      error: (error) => {
        const state = actor.getSnapshot().context.state;
        const message = `The agent actor failed: ${(error as Error)?.message}`;
        finish(() => reject(new AgentRuntimeError(message, state, { cause: error })));
      },
    });
    actor.send({ type: 'execute' });
    if (signal?.aborted) onAbort();
    else signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function abortReason(signal: AbortSignal | undefined): string {
  const reason = signal?.reason;
  if (reason instanceof Error && reason.name !== 'AbortError') return reason.message;
  if (typeof reason === 'string' && reason) return reason;
  return 'Stopped by user request';
}

export type { InspectionEvent };
