import type { AgentDefinition } from '../runtime/agent-definition';
import { createAgent } from '../runtime/create-agent';
import { ExecutionBudget } from '../state/execution-budget';
import { Coverage } from './coverage';
import { coveringPaths } from './covering-paths';
import { type GraphPath, loadGraph } from './graph';
import {
  AnsweringPuppet,
  gateTool,
  initialState,
  type Puppet,
  probeApprover,
  probeSubagent,
  probeTool,
  puppetDriver,
  puppetHooks,
  puppetStore,
} from './puppets';
import { isAuto, runPath } from './run-path';
import { abstractState, answeringActor, describe, eventsFor } from './test-model-events';
import {
  type AgentTestModelOptions,
  type AgentTestPath,
  type ModelEvent,
  type PathChoice,
  PROBE_APPROVER,
  PROBE_GATE,
  PROBE_SUBAGENT,
  PROBE_TOOL,
  type Snapshot,
  STALE,
  STALE_ERROR,
  TIME_LIMIT_SECONDS,
} from './test-model-vocabulary';

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

  const definition = (puppet: Puppet | null, outcomes = new Map<string, unknown>()): AgentDefinition => ({
    driver: puppetDriver(puppet),
    tools: {
      ...options.tools,
      [PROBE_TOOL]: probeTool(puppet, outcomes),
      ...(approvals ? { [PROBE_GATE]: gateTool } : {}),
    },
    hooks: [
      ...(probeHooks ? [puppetHooks(puppet, outcomes, probeHooks === true ? undefined : probeHooks)] : []),
      ...(options.hooks ?? []),
    ],
    budget,
    errorPolicy: options.errorPolicy ?? { maxConsecutiveErrorSteps: 2 },
    subagents: withSubagent
      ? {
          agents: {
            [PROBE_SUBAGENT]: probeSubagent,
            ...(approvals ? { [PROBE_APPROVER]: probeApprover } : {}),
          },
        }
      : undefined,
    store: probeStore ? puppetStore(puppet) : undefined,
  });
  // The machine that paths are computed on: the real one, with this configuration's guards.
  const graphAgent = createAgent(definition(null));
  const initial = initialState(options.startAwaitingApproval ?? false, options.startAfterFinalStep);
  const quiet = options.quiet ?? false;
  const input = graphAgent.inputFor(initial, { session, reports: !quiet });

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
  const toPaths = (paths: GraphPath<Snapshot, ModelEvent>[], choice: PathChoice = {}): AgentTestPath[] => {
    const observable = paths.filter((path) => !restless(path.state));
    return (choice.covering ? coveringPaths(observable) : observable).map((path) => {
      const events = path.steps.map((s) => s.event).filter((e) => e.type !== 'xstate.init');
      const start = lastExecutionStart(path);
      return {
        description: describe(path),
        events,
        run: (check) => runPath(path, definition, coverage, { budget, session, initial, quiet }, check),
        replay: (recorded, replayOptions) =>
          createAgent(definition(new AnsweringPuppet(lastExecutionAnswers(events, start)))).replay(
            recorded,
            replayOptions,
          ),
      };
    });
  };

  // Shortest paths are the heads of transition paths too: computed once, at first use.
  let shortest: GraphPath<Snapshot, ModelEvent>[] | undefined;
  const shortestGraphPaths = () =>
    (shortest ??= loadGraph().getShortestPaths(graphAgent.machine, traversal as never) as GraphPath<
      Snapshot,
      ModelEvent
    >[]);

  return {
    machine: graphAgent.machine,
    /** The agent with no puppets: it replays a path's final state (`agent.replay(state)`), its model and tools answering from it. */
    agent: graphAgent,
    /** One shortest path to every distinct situation of the loop. */
    shortestPaths: (choice?: PathChoice) => toPaths(shortestGraphPaths(), choice),
    /**
     * One path per transition of the situation graph: the shortest path to the transition's
     * source, then the transition. Together they take every transition of the chart that this
     * configuration can take.
     */
    transitionPaths: (choice?: PathChoice) => {
      const bySituation = new Map(shortestGraphPaths().map((p) => [abstractState(p.state), p]));
      const adjacency = loadGraph().getAdjacencyMap(
        graphAgent.machine as never,
        traversal as never,
      ) as unknown as Record<string, { transitions: Record<string, { event: ModelEvent; state: Snapshot }> }>;
      const paths: GraphPath<Snapshot, ModelEvent>[] = [];
      for (const [situation, { transitions }] of Object.entries(adjacency)) {
        const head = bySituation.get(situation);
        if (!head) continue;
        for (const { event, state } of Object.values(transitions)) {
          paths.push({ state, weight: head.weight + 1, steps: [...head.steps, { event, state }] });
        }
      }
      return toPaths(paths, choice);
    },
    /** Every simple path (no situation twice); grows fast: keep budgets small. */
    simplePaths: (choice?: PathChoice) =>
      toPaths(loadGraph().getSimplePaths(graphAgent.machine, traversal as never) as never, choice),
    /** States and transitions of the chart taken by the runs so far, and those never taken. */
    coverage: () => coverage.report(graphAgent.machine),
  };
}

/** The behaviours a path gave each puppet in its last execution (its final state's), in order. */
function lastExecutionAnswers(
  events: readonly ModelEvent[],
  start: number,
): ConstructorParameters<typeof AnsweringPuppet>[0] {
  const answers = { driver: [], tool: [], hooks: [], store: [] } as ConstructorParameters<
    typeof AnsweringPuppet
  >[0];
  const puppetOf: Record<string, keyof typeof answers> = {
    driver: 'driver',
    toolExecutor: 'tool',
    hooks: 'hooks',
    checkpoint: 'store',
  };
  for (const event of events.slice(start + 1)) {
    const actor = answeringActor(event.type);
    const puppet = actor ? puppetOf[actor] : undefined;
    // a late answer to an earlier request is dropped by the run: no puppet played it
    if (puppet && !isAuto(event) && event.behaviour !== STALE && event.behaviour !== STALE_ERROR)
      answers[puppet].push(event.behaviour);
  }
  return answers;
}

/**
 * The index (among the path's events, `xstate.init` left out) of the event that started its last
 * execution: an `execute` or `user.message` taken outside a run (one sent during a run is refused
 * and starts nothing); -1 when the path starts none.
 */
function lastExecutionStart(path: GraphPath<Snapshot, ModelEvent>): number {
  const steps = path.steps.filter((s) => s.event.type !== 'xstate.init');
  const initial = path.steps[0]?.event.type === 'xstate.init' ? path.steps[0].state : undefined;
  for (let i = steps.length - 1; i >= 0; i--) {
    const before = i === 0 ? initial : steps[i - 1]?.state;
    const after = steps[i]?.state;
    if (before && after && !before.matches('inProgress') && after.matches('inProgress')) return i;
  }
  return -1;
}
