import type { Driver } from '../drivers/driver';
import { modelDriver } from '../drivers/model-driver';
import type { Agent } from '../runtime/agent-actor';
import type { AgentDefinition, SubagentDefinition } from '../runtime/agent-definition';
import { upgradeState } from '../runtime/agent-migrations';
import { MessageStore } from '../state/agent-context';
import { AgentState } from '../state/agent-state';
import { AgentMachineError, InvalidArgumentError } from '../state/errors';
import { ExecutionState } from '../state/execution-state';
import type { Message } from '../state/message';
import { StopReason } from '../state/stop-reason';
import { stoppedAnswerOf, withStoppedAnswer } from '../state/stopped-answer';
import type { Tool, ToolSet } from '../tools/define-tool';
import { firstDivergence } from './replay-comparison';
import { type Recording, recordedState, sessionReplayDriver, untilAborted } from './replay-driver';
import { recordedToolExecutionIds, withRecordedDraws } from './replay-ids';
import { recordedSteering, runAsRecorded, stoppableHooks } from './replay-inputs';
import { interruptedAsRecorded } from './replay-interrupted';
import type { ReplayOptions, ReplayResult } from './replay-options';
import { type RecordedSteering, ReplaySession } from './replay-tracks';
import { refuseUnreplayable } from './unreplayable-run';

export type { ReplayOptions, ReplayResult } from './replay-options';

/**
 * Runs a recorded execution again through this agent's definition (its chart, hooks, budget, and
 * tools when `tools: 'live'`), the model answering from the recording, and names the first
 * divergence. The run starts from the recorded state as it was before the execution (the
 * execution's own messages left out); a `systemPrompt` of the definition replaces the recorded one.
 */
export async function replayRun(
  definition: AgentDefinition,
  build: (definition: AgentDefinition) => Agent,
  recorded: Recording,
  options: ReplayOptions = {},
): Promise<ReplayResult> {
  // a session saved by an older version is replayed as this version loads it: migrated
  const state = upgradeState(definition, recordedState(recorded));
  const mode = options.tools ?? 'recorded';
  if (mode !== 'recorded' && mode !== 'live')
    throw new InvalidArgumentError(
      'replay options.tools',
      `got ${JSON.stringify(mode)}; use 'recorded' or 'live'`,
    );
  const fromStep = options.fromStep ?? null;
  if (fromStep !== null && (!Number.isInteger(fromStep) || fromStep < 1))
    throw new InvalidArgumentError('replay options.fromStep', `got ${fromStep}; give a step number from 1`);
  const execution = state.execution();
  if (!execution)
    throw new InvalidArgumentError(
      'replay(recorded)',
      'the state has no execution to replay: pass a state saved after a run (not after forNextExecution())',
    );
  const session = new ReplaySession(state, fromStep);
  refuseUnreplayable(state, session, Object.keys(definition.subagents?.agents ?? {}));
  const replayer = takeReplayer(definition, build, mode);
  replayer.session = session;
  let done: AgentState;
  try {
    const signals = [session.endSignal, session.userStopSignal, ...(options.signal ? [options.signal] : [])];
    session.steering = recordedSteering(state);
    const start = startOf(state, execution.executionId(), definition, session.steering);
    done = await runAsRecorded(replayer.agent, start, session, AbortSignal.any(signals), options.onEvent);
  } catch (error) {
    await replayer.agent.close();
    throw error;
  }
  // its run has settled (its actor stops and starts no more calls): the agent replays the next one
  idleReplayers(definition)[mode].push(replayer);
  // what the model had streamed when a person stopped the recorded run (kept by a chat), kept again
  const stopped = stoppedAnswerOf(state);
  if (stopped && done.stopReason() === StopReason.UserRequested)
    done = withStoppedAnswer(done, stopped.content);
  const upTo = session.unfinished ? state.stepCount() + 1 : fromStep;
  const divergence = firstDivergence(state, done, (recorded) => session.requestDivergence(recorded), upTo);
  // the recording's clock readings and ids where the replay followed it: all of it, or the steps
  // before the fork or the divergence
  const followed = [divergence?.stepNumber, fromStep ?? undefined].filter((n) => n !== undefined);
  const steps = followed.length > 0 ? Math.min(...followed) - 1 : null;
  const replayed = done;
  let kept: AgentState | undefined;
  return {
    // made when read (it writes out both states): a caller after the divergence alone
    // (`verifyUpgrade`, the CLI) does not pay for it
    get state() {
      kept ??= withRecordedDraws(state, replayed, steps);
      return kept;
    },
    divergence,
  };
}

/**
 * The replay agents of each definition that run no replay now, by tools mode. Building one
 * provides its chart twice (its actors, then without the events no one hears): that cost more
 * than replaying a 20-step recording (#47's bench: `verifyUpgrade` replays every session). Each
 * runs one replay at a time: replays at the same time take one each.
 */
const idle = new WeakMap<AgentDefinition, Record<'recorded' | 'live', Replayer[]>>();

function idleReplayers(definition: AgentDefinition): Record<'recorded' | 'live', Replayer[]> {
  const kept = idle.get(definition);
  if (kept) return kept;
  const replayers = { recorded: [], live: [] };
  idle.set(definition, replayers);
  return replayers;
}

/** An idle replay agent of this definition, or a new one. */
function takeReplayer(
  definition: AgentDefinition,
  build: (definition: AgentDefinition) => Agent,
  mode: 'recorded' | 'live',
): Replayer {
  return idleReplayers(definition)[mode].pop() ?? new Replayer(definition, build, mode);
}

/** A replay agent, and the replay it answers for (the one it runs, or ran last). */
class Replayer {
  readonly agent: Agent;
  session: ReplaySession | null = null;

  constructor(
    definition: AgentDefinition,
    build: (definition: AgentDefinition) => Agent,
    mode: 'recorded' | 'live',
  ) {
    // read by each model call, tool call and hook stage as it starts: the replay it runs in
    const current = () => this.session as ReplaySession;
    this.agent = build(
      replayDefinition(definition, current, mode, liveDriver(definition, undefined), new Map()),
    );
  }
}

/**
 * The recorded state as it was when its execution began: its messages left out, the execution
 * begun under its recorded id.
 */
function startOf(
  state: AgentState,
  executionId: string,
  definition: AgentDefinition,
  steering: RecordedSteering,
): AgentState {
  const store = state.store();
  const sections: Record<string, readonly Message[]> = {};
  const steered = new Set([...steering.joined.values()].flat());
  for (const message of steering.leftover) steered.add(message);
  for (const name of store.sectionNames())
    sections[name] = store
      .section(name)
      .filter((m) => m.metadata.execution_id !== executionId && !steered.has(m));
  let context = state.context().withStore(MessageStore.of(sections));
  if (definition.systemPrompt) context = context.withSystemPrompt('');
  // begun as a run with a store begins it, before its first step; its time budget counts from now
  return AgentState.restore({
    agentId: state.agentId(),
    parentAgentId: state.parentAgentId(),
    createdAt: state.createdAt().getTime(),
    updatedAt: state.updatedAt().getTime(),
    executionCount: state.executionCount(),
    llmConfig: state.llmConfig(),
    context,
    execution: ExecutionState.fresh(executionId, Date.now()),
  });
}

/** The driver a definition runs on outside a replay (its model's, its own, or its caller's). */
function liveDriver(definition: AgentDefinition, inherited: Driver | undefined): Driver | undefined {
  if (definition.driver) return definition.driver;
  if (!definition.model) return inherited;
  return modelDriver(definition.model, {
    ...definition.modelOptions,
    ...(definition.context !== undefined && { context: definition.context }),
    fallbackModels: definition.fallbackModels ?? definition.modelOptions?.fallbackModels,
  });
}

/**
 * The definition a replay runs: the replay driver instead of the model (for each subagent too),
 * recorded tool results instead of the tools (with `tools: 'recorded'`), no store, telemetry or
 * MCP servers.
 */
function replayDefinition<D extends AgentDefinition>(
  definition: D,
  session: () => ReplaySession,
  mode: 'recorded' | 'live',
  live: Driver | undefined,
  seen: Map<AgentDefinition, AgentDefinition>,
): D {
  const known = seen.get(definition);
  if (known) return known as D;
  const {
    model: _model,
    fallbackModels: _fallbackModels,
    context: _context,
    mcpServers: _mcpServers,
    store: _store,
    telemetry: _telemetry,
    // the recording is migrated before the replay, not again at its start
    version: _version,
    migrations: _migrations,
    ...rest
  } = definition;
  const replayed: Record<string, unknown> = {
    ...rest,
    driver: interruptedAsRecorded(
      sessionReplayDriver(session, {
        live,
        compileMessages: definition.modelOptions?.compileMessages,
      }),
      session,
    ),
  };
  seen.set(definition, replayed as D);
  replayed.hooks = [recordedToolExecutionIds(session), ...stoppableHooks(definition.hooks ?? [], session)];
  if (definition.tools && mode === 'recorded') replayed.tools = recordedTools(definition.tools, session);
  const subagents = definition.subagents;
  if (subagents?.agents) {
    const agents: Record<string, SubagentDefinition> = {};
    for (const [name, child] of Object.entries(subagents.agents))
      agents[name] = replayDefinition(child, session, mode, liveDriver(child, live), seen);
    replayed.subagents = { ...subagents, agents };
  }
  return replayed as D;
}

/** The tools with each call answered from the recording (or run, in the live part of a fork). */
function recordedTools(tools: ToolSet, current: () => ReplaySession): ToolSet {
  const replayed: Record<string, Tool> = {};
  for (const [name, tool] of Object.entries(tools)) {
    replayed[name] = {
      ...tool,
      execute: (input, options) => {
        const session = current();
        if (session.runsLive(options.state)) {
          if (!tool.execute) throw new InvalidArgumentError(`tools.${name}`, 'has no execute function');
          return tool.execute(input, options);
        }
        const recorded = session.recordedExecution(options.state, options.toolCallId);
        const error = recorded?.error();
        // a person stopped the recorded run while this call was in flight (it has no result, or
        // was aborted): the replay sends the same stop here
        if ((!recorded || error?.code === 'ABORTED') && session.stopsHere(options.state, 'tools', true))
          return untilAborted(options.signal);
        if (!recorded) throw new MissingRecordedResultError(name, options.toolCallId);
        // a tool that asked the run to stop asks again; any other error is thrown as the plain
        // record it is, which the tool executor records unchanged
        if (error?.code === 'AGENT_STOP') throw session.recordedStop(options.state, error.message) ?? error;
        if (error) throw error;
        return recorded.value();
      },
    };
  }
  return replayed;
}

/** A tool call the recording has no result for (the recorded run never finished it). */
export class MissingRecordedResultError extends AgentMachineError {
  static override get name(): string {
    return 'MissingRecordedResultError';
  }

  constructor(
    readonly toolName: string,
    readonly toolCallId: string,
  ) {
    super(
      'REPLAY_RESULT_MISSING',
      `The recording has no result for tool call '${toolCallId}' (${toolName}): replay with tools: 'live' to run it`,
    );
  }
}
