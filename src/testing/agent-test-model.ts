import { getAdjacencyMap, getShortestPaths, getSimplePaths, type StatePath } from '@xstate/graph';
import { type AnyEventObject, type InspectionEvent, SimulatedClock, type SnapshotFrom } from 'xstate';
import { z } from 'zod';
import type { LoopContext, LoopSession } from '../../machines/agentLoop';
import type { Driver } from '../drivers/driver';
import { consecutiveErrorSteps } from '../hooks/error-policy';
import type { Hook, StageName } from '../hooks/hook';
import { InMemorySessionStore } from '../persistence/in-memory-session-store';
import type { SessionStore } from '../persistence/session-store';
import type { AgentDefinition, SubagentDefinition } from '../runtime/agent-definition';
import { type Agent, createAgent } from '../runtime/create-agent';
import { AgentError } from '../state/agent-error';
import { AgentState } from '../state/agent-state';
import { AgentStep, InferenceResponse } from '../state/agent-step';
import { AgentStopError } from '../state/agent-stop-error';
import { AgentMachineError } from '../state/errors';
import { ExecutionBudget } from '../state/execution-budget';
import type { AgentEvent } from '../state/loop-events';
import { Message } from '../state/message';
import { ToolExecution } from '../state/tool-execution';
import { Usage } from '../state/usage';
import { defineTool } from '../tools/define-tool';
import { invariantViolations } from './invariants';

/** The tool the test model's model calls; its outcome is decided by the path. */
export const PROBE_TOOL = 'probe';
/** The subagent the test model's model may call; it answers at once. */
export const PROBE_SUBAGENT = 'helper';
/** The tool that needs a person's approval; it runs at once when approved. */
export const PROBE_GATE = 'gate';
const APPROVAL_TIMEOUT_EVENT = 'xstate.after.approvalTimeout.agent.inProgress.step.awaitingApproval.waiting';
/** The time budget of the test model (its approval wait can time out). */
const TIME_LIMIT_SECONDS = 3_600;

type Snapshot = SnapshotFrom<Agent['machine']>;
/** An event of a path: a machine event, tagged with the behaviour the puppets must play. */
export type ModelEvent = AnyEventObject & { readonly behaviour?: string };

export interface AgentTestModelOptions {
  /** Tools besides the probe (the modelled model only calls the probe). */
  readonly tools?: AgentDefinition['tools'];
  /** Your hooks, run for real after the probe hooks. A hook that changes the flow makes the run leave its path. */
  readonly hooks?: readonly Hook[];
  /** Default: 2 steps and 1,000 tokens, which keeps the graph small. */
  readonly budget?: ExecutionBudget;
  readonly errorPolicy?: AgentDefinition['errorPolicy'];
  /** Probe hooks at every stage, so hook outcomes (ok, continue, throw, stop) are explored. Default true. */
  readonly probeHooks?: boolean;
  /** Let the model call a probe subagent. Default true. */
  readonly subagent?: boolean;
  /** Executions per path (a second one via `user.message`). Default 2. */
  readonly executions?: number;
  /** Checkpoint to a probe session store whose saves succeed or fail as the path says. Default true. */
  readonly probeStore?: boolean;
  /** Let the model call a tool that needs approval, and explore decisions and the timeout. Default true. */
  readonly approvals?: boolean;
  /** Start from a state saved while awaiting approval (as `agent.decide()` does). Default false. */
  readonly startAwaitingApproval?: boolean;
}

/** What a path's run saw at one step: the real actor's snapshot, and the events emitted so far. */
export interface AgentTestStep {
  readonly index: number;
  readonly event: ModelEvent;
  readonly expected: Snapshot;
  readonly snapshot: Snapshot;
  readonly state: AgentState;
  readonly events: readonly AgentEvent[];
}

export interface AgentTestPath {
  readonly description: string;
  readonly events: readonly ModelEvent[];
  /**
   * Runs the path against the real runtime (createAgent with puppet model, tool and hooks), checks
   * the built-in invariants at every step, then calls `check` for each step.
   */
  run(check?: (step: AgentTestStep) => void | Promise<void>): Promise<AgentState>;
}

/** A run left its path, or broke an invariant; the message names the step and what differed. */
export class AgentTestModelError extends AgentMachineError {
  constructor(message: string) {
    super('AGENT_TEST_MODEL', message);
  }
}

const USAGE = { inputTokens: 6, outputTokens: 4 };
const CRASH = 'crash the tool hook';
const AUTO = 'auto';
/** A worker answer to an earlier request: delivered as it is, no puppet plays it. */
const STALE = 'stale';
const STALE_ERROR = 'staleError';
const probeError = AgentError.of('ProbeError', 'abstraction only');
const SUBAGENT_USAGE = { inputTokens: 3, outputTokens: 2 };
const hookStageOf: Record<string, StageName> = {
  beforeExecution: 'beforeExecution',
  beforeStep: 'beforeStep',
  afterStep: 'afterStep',
  failing: 'onError',
  afterExecution: 'afterExecution',
};

/**
 * Enumerates the paths of the agent loop for an agent configuration (shortest paths to every
 * distinct situation, or all simple paths) with @xstate/graph over the real machine, and runs
 * each against the real runtime: a puppet model answers as the path says (tool call, subagent
 * call, final answer, error, stop request), a probe tool succeeds or fails, probe hooks pass,
 * request continuation, throw or stop, and `stop` arrives where the path sends it. At every step
 * the real actor must be in the state the path expects, and the invariants hold: status matches
 * the state, steps never exceed maxSteps, usage never exceeds maxTokens by more than the last
 * step, every started tool call is recorded exactly once, completed steps are never lost, and the
 * final stop reason is the highest-priority signal. `coverage()` reports the states and
 * transitions of the chart the runs have taken.
 *
 * @example
 * const model = createAgentTestModel({ hooks: [myHook] });
 * for (const path of model.shortestPaths()) {
 *   it(path.description, () => path.run(({ state }) => expect(myInvariant(state)).toBe(true)));
 * }
 */
export function createAgentTestModel(options: AgentTestModelOptions = {}) {
  const budget =
    options.budget ?? new ExecutionBudget({ maxSteps: 2, maxTokens: 1_000, maxSeconds: TIME_LIMIT_SECONDS });
  const approvals = options.approvals ?? true;
  const timeLimit = budget.maxSeconds !== null || budget.deadline !== null;
  const probeHooks = options.probeHooks ?? true;
  const withSubagent = options.subagent ?? true;
  const executions = options.executions ?? 2;
  const probeStore = options.probeStore ?? true;
  const session = probeStore ? { id: 'model-session', version: null } : undefined;
  const coverage = new Coverage();

  const definition = (puppet: Puppet | null): AgentDefinition => ({
    driver: puppetDriver(puppet),
    tools: {
      ...options.tools,
      [PROBE_TOOL]: probeTool(puppet),
      ...(approvals ? { [PROBE_GATE]: gateTool } : {}),
    },
    hooks: [...(probeHooks ? [puppetHooks(puppet)] : []), ...(options.hooks ?? [])],
    budget,
    errorPolicy: options.errorPolicy ?? { maxConsecutiveErrorSteps: 2 },
    subagents: withSubagent ? { agents: { [PROBE_SUBAGENT]: probeSubagent } } : undefined,
    store: probeStore ? puppetStore(puppet) : undefined,
  });
  // The machine that paths are computed on: the real one, with this configuration's guards.
  const graphAgent = createAgent(definition(null));
  const initial = initialState(options.startAwaitingApproval ?? false);
  const input = graphAgent.inputFor(initial, undefined, session);

  const eventOptions = { withSubagent, executions, probeHooks, approvals, timeLimit };
  // A situation the runtime leaves by itself cannot be observed at rest: no path may end there.
  const restless = (snapshot: Snapshot) => {
    const next = eventsFor(snapshot, eventOptions);
    return next.length === 1 && isAuto(next[0]);
  };
  const traversal = {
    input,
    events: (snapshot: Snapshot) => eventsFor(snapshot, eventOptions),
    serializeState: (snapshot: Snapshot) => abstractState(snapshot),
    serializeEvent: (event: ModelEvent) => `${event.type}:${event.behaviour ?? ''}:${event.toolCallId ?? ''}`,
  };
  const toPaths = (paths: StatePath<Snapshot, ModelEvent>[]): AgentTestPath[] =>
    paths
      .filter((path) => !restless(path.state))
      .map((path) => {
        const events = path.steps.map((s) => s.event).filter((e) => e.type !== 'xstate.init');
        return {
          description: describe(path),
          events,
          run: (check) => runPath(path, definition, coverage, budget, session, initial, check),
        };
      });

  return {
    machine: graphAgent.machine,
    /** One shortest path to every distinct situation of the loop. */
    shortestPaths: () => toPaths(getShortestPaths(graphAgent.machine, traversal as never) as never),
    /**
     * One path per transition of the situation graph: the shortest path to the transition's
     * source, then the transition. Together they take every transition of the chart that this
     * configuration can take.
     */
    transitionPaths: () => {
      const shortest = getShortestPaths(graphAgent.machine, traversal as never) as unknown as StatePath<
        Snapshot,
        ModelEvent
      >[];
      const bySituation = new Map(shortest.map((p) => [abstractState(p.state), p]));
      const adjacency = getAdjacencyMap(graphAgent.machine as never, traversal as never) as unknown as Record<
        string,
        { transitions: Record<string, { event: ModelEvent; state: Snapshot }> }
      >;
      const paths: StatePath<Snapshot, ModelEvent>[] = [];
      for (const [situation, { transitions }] of Object.entries(adjacency)) {
        const head = bySituation.get(situation);
        if (!head) continue;
        for (const { event, state } of Object.values(transitions)) {
          paths.push({ state, weight: head.weight + 1, steps: [...head.steps, { event, state }] });
        }
      }
      return toPaths(paths);
    },
    /** Every simple path (no situation twice); grows fast: keep budgets small. */
    simplePaths: () => toPaths(getSimplePaths(graphAgent.machine, traversal as never) as never),
    /** States and transitions of the chart taken by the runs so far, and those never taken. */
    coverage: () => coverage.report(graphAgent.machine),
  };
}

// ---- the graph side ----------------------------------------------------------------------------

/** The workers answer with events of their own; `checkpoint` ends as an actor does. */
const WORKERS = new Set(['hooks', 'driver', 'toolExecutor']);
const answerType = (actor: string, kind: 'done' | 'error') =>
  WORKERS.has(actor) ? `${actor}.${kind}` : `xstate.${kind}.actor.${actor}`;
/** The actor whose answer (done or error) an event type is, or null (`answerType` read back). */
function answeringActor(type: string): string | null {
  const match = /^xstate\.(?:done|error)\.actor\.(\w+)$/.exec(type) ?? /^(\w+)\.(?:done|error)$/.exec(type);
  const actor = match?.[1];
  return actor && (WORKERS.has(actor) || match[0].startsWith('xstate.')) ? actor : null;
}
const done = (actor: string, output: AgentState, behaviour: string): ModelEvent => ({
  type: answerType(actor, 'done'),
  output,
  behaviour,
  toJSON: () => ({ type: answerType(actor, 'done'), behaviour }),
});
const failed = (actor: string, error: unknown, behaviour: string): ModelEvent => ({
  type: answerType(actor, 'error'),
  error,
  behaviour,
  toJSON: () => ({ type: answerType(actor, 'error'), behaviour }),
});

/**
 * Answers to an earlier request, on their way when a stop (or a new execution) came: their token
 * is not the one waited for, and the waiting state drops them.
 */
function staleAnswers(worker: string, state: AgentState): ModelEvent[] {
  return [
    { ...done(worker, state, STALE), token: 'an earlier request' },
    { ...failed(worker, new Error('late failure'), STALE_ERROR), token: 'an earlier request' },
  ];
}

/** The events possible in a situation, with the outputs the puppets will produce. */
function eventsFor(
  snapshot: Snapshot,
  options: {
    withSubagent: boolean;
    executions: number;
    probeHooks: boolean;
    approvals: boolean;
    timeLimit: boolean;
  },
): ModelEvent[] {
  const { state } = snapshot.context as LoopContext;
  const value = JSON.stringify(snapshot.value);
  if (['"pending"', '"completed"', '"stopped"', '"failed"'].includes(value)) {
    if (value !== '"pending"' && state.executionCount() >= options.executions) return [];
    return [{ type: 'execute' }, { type: 'user.message', text: 'again' }];
  }
  if (value.includes('runHooks') && !options.probeHooks) {
    // Only your own hooks run here: they answer by themselves.
    return [done('hooks', state, AUTO)];
  }
  const events: ModelEvent[] = [{ type: 'stop' }];
  if (value.includes('runHooks')) {
    const stage = Object.keys(hookStageOf).find((s) => value.includes(`"${s}"`)) as string;
    const hookStage = hookStageOf[stage] as StageName;
    events.push(done('hooks', hookBehaviour(state, 'pass'), 'pass'));
    // A continuation over a steps-limit signal would run past maxSteps on purpose; not modelled.
    const overLimit = state
      .execution()
      ?.continuation()
      .stopSignals.some((s) => s.reason === 'steps_limit_reached');
    if (hookStage === 'afterStep' || (hookStage === 'beforeStep' && !overLimit)) {
      events.push(done('hooks', hookBehaviour(state, 'continue'), 'continue'));
    }
    events.push(failed('hooks', new Error('probe hook failed'), 'throw'));
    if (hookStage !== 'onError' && hookStage !== 'afterExecution') {
      events.push(failed('hooks', new AgentStopError('probe hook stops'), 'stop'));
    }
    events.push(...staleAnswers('hooks', state));
  } else if (value.includes('"inference"')) {
    const answers = [
      'toolCall',
      'final',
      ...(options.withSubagent ? ['subagent'] : []),
      ...(options.approvals ? ['approvalCall'] : []),
    ];
    for (const answer of answers) events.push(done('driver', modelAnswer(state, answer), answer));
    events.push(failed('driver', new Error('model unavailable'), 'error'));
    events.push(failed('driver', new AgentStopError('model stops'), 'stop'));
    events.push(...staleAnswers('driver', state));
  } else if (value.includes('"waiting"')) {
    const pending = state.pendingApprovals()[0]?.toolCallId ?? 'none';
    events.push(
      { type: 'approve', toolCallId: pending },
      { type: 'reject', toolCallId: pending, reason: 'no' },
    );
    events.push({ type: 'edit', toolCallId: pending, input: { n: 99 } });
    for (const type of ['approve', 'reject', 'edit'])
      events.push({ type, toolCallId: 'not-pending', input: { n: 1 } });
    events.push({ type: 'user.message', text: 'meanwhile' }, { type: 'execute' });
    if (options.timeLimit) events.push({ type: APPROVAL_TIMEOUT_EVENT, behaviour: 'timeout' });
  } else if (value.includes('"saving"') || value.includes('"persist"')) {
    events.push(done('checkpoint', state, 'saved'));
    events.push(failed('checkpoint', new Error('probe store failed'), 'fail'));
  } else if (value.includes('"tools"')) {
    const calls = state.currentStep()?.requestedToolCalls() ?? [];
    if (calls.some((c) => c.name === PROBE_SUBAGENT || c.name === PROBE_GATE)) {
      // The helper and the gate answer at once: nothing else can happen while they run.
      return [done('toolExecutor', toolOutcome(state, 'ok'), AUTO)];
    } else {
      events.push(done('toolExecutor', toolOutcome(state, 'ok'), 'ok'));
      events.push(done('toolExecutor', toolOutcome(state, 'fail'), 'fail'));
      events.push(failed('toolExecutor', stopWithState(toolOutcome(state, 'fail')), 'stop'));
      if (options.probeHooks)
        events.push(failed('toolExecutor', new Error('probe tool hook failed'), 'crash'));
      events.push(...staleAnswers('toolExecutor', state));
    }
  }
  return events;
}

function stopWithState(state: AgentState): AgentStopError {
  const error = new AgentStopError('probe tool stops', {}, PROBE_TOOL);
  error.state = state;
  return error;
}

/** A situation, abstracted so the graph is finite: what guards and invariants depend on. */
function abstractState(snapshot: Snapshot): string {
  const { state, error } = snapshot.context as LoopContext;
  const step = state.currentStep();
  return JSON.stringify({
    value: snapshot.value,
    executions: state.executionCount(),
    status: state.status(),
    steps: state.stepCount(),
    signals: [
      ...new Set(
        state
          .execution()
          ?.continuation()
          .stopSignals.map((s) => s.reason) ?? [],
      ),
    ].sort(),
    continued: state.execution()?.continuation().isContinuationRequested() ?? false,
    // error steps at the end of the recorded steps, whatever the step in flight is
    errorStreak: consecutiveErrorSteps(state.withCurrentStep(AgentStep.of().withError(probeError))) - 1,
    current: step
      ? [step.stepType(), step.requestedToolCalls().map((c) => c.name), step.toolExecutions().length]
      : null,
    // what `decide` reads once the step is recorded: the last step's calls and its continuation
    last: lastStepOf(state),
    approval: approvalOf(state),
    failing: error !== null,
  });
}

function approvalOf(state: AgentState) {
  const approval = state.approval();
  if (!approval) return null;
  return [
    state.pendingApprovals().length,
    Object.values(approval.decisions)
      .map((d) => d.type)
      .sort(),
  ];
}

function lastStepOf(state: AgentState) {
  const last = state.lastStepExecution();
  if (!last) return null;
  return [last.step().stepType(), last.step().hasToolCalls(), last.continuation().isContinuationRequested()];
}

function describe(path: StatePath<Snapshot, ModelEvent>): string {
  const events = path.steps
    .map((s) => s.event)
    .filter((e) => e.type !== 'xstate.init')
    .map((e) => {
      const actor = answeringActor(e.type);
      return actor ? `${actor}:${e.behaviour}` : e.type;
    });
  return `${JSON.stringify(path.state.value)} via ${events.join(' > ') || '(start)'}`;
}

// ---- puppet behaviours, shared by the graph and the runs ----------------------------------------

function hookBehaviour(state: AgentState, behaviour: string): AgentState {
  return behaviour === 'continue' ? state.withContinuationRequested() : state;
}

function modelAnswer(state: AgentState, answer: string): AgentState {
  const n = state.stepCount() + 1;
  const call =
    answer === 'toolCall'
      ? { id: `probe-${state.executionCount()}-${n}`, name: PROBE_TOOL, args: { n } }
      : answer === 'subagent'
        ? { id: `helper-${state.executionCount()}-${n}`, name: PROBE_SUBAGENT, args: { task: `part ${n}` } }
        : answer === 'approvalCall'
          ? { id: `gate-${state.executionCount()}-${n}`, name: PROBE_GATE, args: { n } }
          : null;
  const text = call ? '' : `answer ${n}`;
  const answered = state.withCurrentStep(
    AgentStep.of({
      inputMessages: state.messageList(),
      outputMessages: [Message.assistant(text, call ? [call] : [])],
      inferenceResponse: InferenceResponse.of({
        text,
        toolCalls: call ? [call] : [],
        finishReason: call ? 'tool-calls' : 'stop',
        usage: Usage.of(USAGE),
      }),
    }),
  );
  return call?.name === PROBE_GATE ? answered.withApprovalRequested([call.id], 0) : answered;
}

function toolOutcome(state: AgentState, outcome: 'ok' | 'fail'): AgentState {
  const step = state.currentStep();
  if (!step) return state;
  const executions = step.requestedToolCalls().map((call) => {
    if (call.name === PROBE_SUBAGENT)
      return ToolExecution.succeeded(call, 'helped', 0, 0).withUsage(Usage.of(SUBAGENT_USAGE));
    if (call.name === PROBE_GATE) {
      const decision = state.approval()?.decisions[call.id];
      return decision?.type === 'reject'
        ? ToolExecution.blocked(call, 'rejected', 0)
        : ToolExecution.succeeded(call, 'opened', 0, 0);
    }
    return outcome === 'ok'
      ? ToolExecution.succeeded(call, 'ok', 0, 0)
      : ToolExecution.failed(call, new Error('probe failed'), 0, 0);
  });
  return state.withCurrentStep(step.withToolExecutions(executions));
}

// ---- puppets: the runtime's actors, answering as the path says ---------------------------------

interface PuppetCall {
  readonly actor: 'driver' | 'tool' | 'hooks' | 'store';
  readonly state: AgentState;
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
}

class Puppet {
  private pending: PuppetCall[] = [];
  private waiter: (() => void) | null = null;

  call(actor: PuppetCall['actor'], state: AgentState, signal: AbortSignal): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const entry: PuppetCall = { actor, state, resolve, reject };
      this.pending.push(entry);
      signal.addEventListener('abort', () => {
        this.pending = this.pending.filter((p) => p !== entry);
        reject(signal.reason);
      });
      this.waiter?.();
    });
  }

  take(actor: PuppetCall['actor']): PuppetCall | undefined {
    // the latest call: an earlier one of the same actor was left behind by a stop (a save in flight)
    const index = this.pending.findLastIndex((p) => p.actor === actor);
    return index < 0 ? undefined : this.pending.splice(index, 1)[0];
  }

  hasPending(): boolean {
    return this.pending.length > 0;
  }

  onCall(fn: (() => void) | null): void {
    this.waiter = fn;
  }
}

function puppetDriver(puppet: Puppet | null): Driver {
  return {
    name: 'puppet',
    infer: async (state, { signal, report }) => {
      if (!puppet) throw new Error('graph-only agent');
      const answer = (await puppet.call('driver', state, signal)) as string;
      if (answer === 'error') throw new Error('model unavailable');
      if (answer === 'stop') throw new AgentStopError('model stops');
      const ids = {
        agentId: state.agentId(),
        parentAgentId: state.parentAgentId(),
        executionId: state.executionId() ?? '',
        stepNumber: state.stepCount() + 1,
      };
      // as a model driver with a context window does once the prompt holds an earlier step
      if (state.stepCount() > 0) {
        const compaction = { strategy: 'tool-results', messagesRemoved: 1, forced: false } as const;
        report({ type: 'context.compacted', ...ids, ...compaction, tokensBefore: 1_200, tokensAfter: 700 });
      }
      if (answer === 'final')
        report({ type: 'text.delta', ...ids, delta: `answer ${state.stepCount() + 1}` });
      return modelAnswer(state, answer);
    },
  };
}

function probeTool(puppet: Puppet | null) {
  return defineTool({
    description: 'A probe whose outcome the test decides',
    inputSchema: z.object({ n: z.number() }),
    execute: async (_input, { signal, state }) => {
      if (!puppet) throw new Error('graph-only agent');
      const outcome = await puppet.call('tool', state, signal);
      if (outcome === 'fail') throw new Error('probe failed');
      if (outcome === 'stop') throw new AgentStopError('probe tool stops', {}, PROBE_TOOL);
      return outcome === 'crash' ? CRASH : 'ok';
    },
  });
}

const gateTool = defineTool({
  description: 'A tool a person must approve',
  inputSchema: z.object({ n: z.number() }),
  needsApproval: true,
  execute: async () => 'opened',
});

/** The state a path starts from: a task, or a step saved while awaiting approval of a gate call. */
function initialState(awaitingApproval: boolean): AgentState {
  const fresh = AgentState.empty({ agentId: 'model' }).withUserMessage('task');
  if (!awaitingApproval) return fresh;
  return modelAnswer(fresh.withExecutionStarted(0).withStepStarted(0), 'approvalCall');
}

const probeSubagent: SubagentDefinition = {
  description: 'A helper that answers at once',
  driver: {
    name: 'helper',
    infer: (state) =>
      state.withCurrentStep(
        AgentStep.of({
          outputMessages: [Message.assistant('helped')],
          inferenceResponse: InferenceResponse.of({
            text: 'helped',
            finishReason: 'stop',
            usage: Usage.of(SUBAGENT_USAGE),
          }),
        }),
      ),
  },
};

/** An in-memory session store whose saves wait for the path to say whether they succeed. */
function puppetStore(puppet: Puppet | null): SessionStore {
  const store = new InMemorySessionStore();
  return {
    load: (id) => store.load(id),
    save: async (id, state, version) => {
      if (!puppet) throw new Error('graph-only agent');
      const outcome = await puppet.call('store', state, new AbortController().signal);
      if (outcome === 'fail') throw new Error('probe store failed');
      return store.save(id, state, version);
    },
    delete: (id) => store.delete(id),
    list: () => store.list(),
    close: () => store.close(),
  };
}

function puppetHooks(puppet: Puppet | null): Hook {
  const stage =
    (name: StageName) =>
    async (state: AgentState, { signal }: { signal: AbortSignal }) => {
      if (!puppet) throw new Error('graph-only agent');
      const behaviour = await puppet.call('hooks', state, signal);
      if (behaviour === 'throw') throw new Error('probe hook failed');
      if (behaviour === 'stop') throw new AgentStopError(`probe hook stops (${name})`);
      return hookBehaviour(state, behaviour as string);
    };
  return {
    name: 'probeHooks',
    // A probe call whose outcome is 'crash' makes this tool hook throw: the tool executor fails.
    afterToolUse: (_state, { toolExecution }) => {
      if (toolExecution.value() === CRASH) throw new Error('probe tool hook failed');
      return undefined;
    },
    beforeExecution: stage('beforeExecution'),
    beforeStep: stage('beforeStep'),
    afterStep: stage('afterStep'),
    afterExecution: stage('afterExecution'),
    onError: stage('onError'),
  };
}

// ---- running a path ----------------------------------------------------------------------------

async function runPath(
  path: StatePath<Snapshot, ModelEvent>,
  definition: (puppet: Puppet) => AgentDefinition,
  coverage: Coverage,
  budget: ExecutionBudget,
  session: LoopSession | undefined,
  initial: AgentState,
  check?: (step: AgentTestStep) => void | Promise<void>,
): Promise<AgentState> {
  const puppet = new Puppet();
  const agent = createAgent(definition(puppet));
  const events: AgentEvent[] = [];
  const clock = new SimulatedClock();
  const actor = agent.createActor(initial, {
    inspect: (event: InspectionEvent) => coverage.record(event),
    session,
    clock,
  });
  let failure: unknown;
  actor.subscribe({ error: (error) => (failure = error) });
  actor.on('*', (event) => events.push(event as AgentEvent));
  actor.start();
  const history: AgentState[] = [];
  try {
    const steps = path.steps.filter((s) => s.event.type !== 'xstate.init');
    let index = 0;
    for (const [i, step] of steps.entries()) {
      const event = step.event;
      index++;
      if (event.type === APPROVAL_TIMEOUT_EVENT) clock.increment(TIME_LIMIT_SECONDS * 1000 + 1);
      else deliver(actor, puppet, event, index);
      // A subagent call finishes by itself: the state before it is passed through, not rested in.
      if (isAuto(steps[i + 1]?.event)) continue;
      await settle(actor, puppet, index, event);
      if (failure) throw failure;
      const snapshot = actor.getSnapshot();
      const state = snapshot.context.state;
      if (JSON.stringify(snapshot.value) !== JSON.stringify(step.state.value)) {
        throw new AgentTestModelError(
          `Step ${index} (${event.type}${event.behaviour ? `:${event.behaviour}` : ''}) left the path: expected ${JSON.stringify(step.state.value)}, the agent is in ${JSON.stringify(snapshot.value)}` +
            `\n  expected situation ${abstractState(step.state)}\n  actual situation   ${abstractState(snapshot)}`,
        );
      }
      const violations = invariantViolations({ snapshot, state, previous: history.at(-1), budget, events });
      if (violations.length)
        throw new AgentTestModelError(`Step ${index} (${event.type}): ${violations.join('; ')}`);
      history.push(state);
      await check?.({ index, event, expected: step.state, snapshot, state, events: [...events] });
    }
    return actor.getSnapshot().context.state;
  } finally {
    actor.stop();
  }
}

/** An event no puppet plays: the runtime gets there by itself. */
function isAuto(event: ModelEvent | undefined): boolean {
  return event?.behaviour === AUTO;
}

function deliver(
  actor: ReturnType<Agent['createActor']>,
  puppet: Puppet,
  event: ModelEvent,
  index: number,
): void {
  const actorId = answeringActor(event.type);
  if (!actorId) {
    actor.send(event as never);
    return;
  }
  if (isAuto(event)) return; // the runtime gets there by itself
  if (event.behaviour === STALE || event.behaviour === STALE_ERROR) {
    actor.send(event as never); // no puppet plays it: it stands for an answer that came late
    return;
  }
  const puppetActor =
    actorId === 'toolExecutor'
      ? 'tool'
      : actorId === 'driver'
        ? 'driver'
        : actorId === 'checkpoint'
          ? 'store'
          : 'hooks';
  const call = puppet.take(puppetActor);
  if (!call) {
    throw new AgentTestModelError(
      `Step ${index} (${event.type}:${event.behaviour}): the agent is not waiting on its ${actorId} (in ${JSON.stringify(actor.getSnapshot().value)})`,
    );
  }
  // the puppet throws for error behaviours itself, as the real actor would
  call.resolve(event.behaviour);
}

/** Resolves once the agent waits on a puppet or rests in a state no puppet drives. */
function settle(
  actor: ReturnType<Agent['createActor']>,
  puppet: Puppet,
  index: number,
  event: ModelEvent,
): Promise<void> {
  const resting = () => {
    const value = JSON.stringify(actor.getSnapshot().value);
    return (
      ['"pending"', '"completed"', '"stopped"', '"failed"'].includes(value) || value.includes('"waiting"')
    );
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(
        new AgentTestModelError(
          `Step ${index} (${event.type}): the agent neither finished nor called its model, tools or hooks within 2 s (in ${JSON.stringify(actor.getSnapshot().value)})`,
        ),
      );
    }, 2_000);
    const check = () => {
      if (puppet.hasPending() || resting()) {
        cleanup();
        // let the machine take the event the puppet call came from before reading its state
        setImmediate(resolve);
      }
    };
    const subscription = actor.subscribe(() => check());
    const cleanup = () => {
      clearTimeout(timer);
      subscription.unsubscribe();
      puppet.onCall(null);
    };
    puppet.onCall(check);
    check();
  });
}

// ---- coverage ----------------------------------------------------------------------------------

type StateNodeLike = {
  id: string;
  states: Record<string, StateNodeLike>;
  transitions: Map<string, TransitionLike[]>;
  always?: TransitionLike[];
};
type TransitionLike = {
  source: { id: string };
  target?: readonly { id: string }[];
  eventType: string;
  guard?: unknown;
};

function transitionKey(t: TransitionLike): string {
  const guard = t.guard
    ? ` [${typeof t.guard === 'object' ? (t.guard as { type?: string }).type : String(t.guard)}]`
    : '';
  const targets = t.target?.map((n) => n.id).join(',') ?? '(self)';
  return `${t.source.id} --${t.eventType || 'always'}${guard}--> ${targets}`;
}

class Coverage {
  private readonly states = new Set<string>();
  private readonly transitions = new Set<string>();

  record(event: InspectionEvent): void {
    if (event.type !== '@xstate.microstep' && event.type !== '@xstate.snapshot') return;
    const snapshot = event.snapshot as { _nodes?: { id: string }[] };
    for (const node of snapshot._nodes ?? []) this.states.add(node.id);
    if (event.type !== '@xstate.microstep') return;
    for (const t of (event as unknown as { _transitions: TransitionLike[] })._transitions) {
      this.transitions.add(transitionKey(t));
      for (const target of t.target ?? []) this.states.add(target.id);
    }
  }

  report(machine: Agent['machine']) {
    const root = (machine as unknown as { root: StateNodeLike }).root;
    const allStates: string[] = [];
    const allTransitions: string[] = [];
    const walk = (node: StateNodeLike) => {
      allStates.push(node.id);
      for (const list of node.transitions.values())
        for (const t of list) allTransitions.push(transitionKey(t));
      for (const t of node.always ?? []) allTransitions.push(transitionKey(t));
      for (const child of Object.values(node.states)) walk(child);
    };
    walk(root);
    return {
      states: allStates,
      transitions: [...new Set(allTransitions)],
      missingStates: allStates.filter((s) => !this.states.has(s)),
      missingTransitions: [...new Set(allTransitions)].filter((t) => !this.transitions.has(t)),
    };
  }
}
