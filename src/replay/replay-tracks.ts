import type { AgentState } from '../state/agent-state';
import type { AgentStep } from '../state/agent-step';
import { AgentStopError } from '../state/agent-stop-error';
import type { AppendOnlyList } from '../state/append-only-list';
import { AgentMachineError } from '../state/errors';
import type { Message } from '../state/message';
import { isPersonStop, type StopSignal } from '../state/stop-signal';
import type { ToolExecution } from '../state/tool-execution';

/** Where a replayed run first acts differently from its recording. */
export interface ReplayDivergence {
  /** The step (1-based) of the run where it differs. */
  readonly stepNumber: number;
  /** `request`: the step would ask the model something else; `tool-result`: a tool call ended otherwise; `outcome`: anything else (steps, status, stop reason, usage). */
  readonly kind: 'request' | 'tool-result' | 'outcome';
  /** A path into the step's JSON (`toolExecutions[0].value.total`), or into the state's for an outcome. */
  readonly path: string;
  readonly recorded: unknown;
  readonly replayed: unknown;
}

/** A replay's model call that differs from the recorded one: the run stops at it. */
export class ReplayDivergenceError extends AgentMachineError {
  static override get name(): string {
    return 'ReplayDivergenceError';
  }

  constructor(readonly divergence: ReplayDivergence) {
    super(
      'REPLAY_DIVERGED',
      `The replay diverged at step ${divergence.stepNumber} (${divergence.kind}) at ${divergence.path}: ` +
        `recorded ${shown(divergence.recorded)}, replayed ${shown(divergence.replayed)}`,
    );
  }
}

export function shown(value: unknown): string {
  const text = value === undefined ? 'undefined' : JSON.stringify(value);
  return text.length > 200 ? `${text.slice(0, 200)}...` : text;
}

/** The messages steered into a recorded run: joined to its conversation (by the step they joined at), or left unjoined. */
export interface RecordedSteering {
  readonly joined: Map<number, readonly Message[]>;
  readonly leftover: readonly Message[];
}

/** One agent of a replay: the recording it answers from, and how far its input was checked. */
export interface ReplayTrack {
  readonly recorded: AgentState;
  readonly steps: readonly AgentStep[];
  /** The root agent of the replay (whose divergences are reported by step), else a subagent. */
  readonly root: boolean;
  /** A subagent started after the fork runs live. */
  readonly live: boolean;
  readonly claimed: Set<AgentState>;
  checked: { replayed: AppendOnlyList<Message>; recorded: AppendOnlyList<Message> } | null;
  /** The request this agent's replay stopped at, if any. */
  divergence: ReplayDivergence | null;
}

/**
 * The recordings of one replay, for the whole tree: the root's state, and the subagents' states
 * kept on its tool executions. A replayed subagent (a fresh agent id) is matched, at its first
 * model call, to its caller's first unclaimed recorded child with the same task.
 */
export class ReplaySession {
  private readonly tracks = new Map<string, ReplayTrack>();

  /** The recorded run did not finish (saved in progress): the replay ends where it ends. */
  readonly unfinished: boolean;
  private readonly ended = new AbortController();

  constructor(
    readonly recorded: AgentState,
    /** Steps from this one on run live (`fromStep`); null: none. */
    readonly fromStep: number | null = null,
  ) {
    this.tracks.set(recorded.agentId(), track(recorded, true, false));
    // saved before it concluded (in progress, or ended but not finalized: its hooks still ran)
    this.unfinished = recorded.execution()?.completedAt() === null && fromStep === null;
  }

  /** Aborted when the replay of an unfinished recording has reached its end. */
  get endSignal(): AbortSignal {
    return this.ended.signal;
  }

  endOfRecording(): void {
    this.ended.abort(new Error('The recording ends here'));
  }

  private readonly stopped = new AbortController();

  /** Aborted, with the recorded message, when the replay delivers the stop a person sent the recorded run. */
  get userStopSignal(): AbortSignal {
    return this.stopped.signal;
  }

  /**
   * Sends the recorded run's next stop by a person (a `stop`, an aborted signal: a `user_requested`
   * signal): the first by aborting `userStopSignal`, a later one (a stop while the run ended after
   * the first) through `sendStop`. True if it did, or if every recorded stop was sent already.
   */
  deliverUserStop(): boolean {
    const stop = this.userStops()[this.stopsSent];
    if (!stop) return this.stopsSent > 0;
    this.steerLeftover();
    this.stopsSent++;
    if (this.stopsSent === 1) this.stopped.abort(stop.message);
    else this.sendStop?.(stop.message);
    return true;
  }

  private stopsSent = 0;

  /** Sends a `stop` to the replayed root run (set while it runs). */
  sendStop: ((reason: string) => void) | null = null;

  /**
   * The messages steered into the recorded run (`Message` metadata `steered`): those that joined its
   * conversation, by the step they joined at, and those it ended with unjoined (set by the replay).
   */
  steering: RecordedSteering = { joined: new Map(), leftover: [] };

  /** Steers in again, while the root's step `stepNumber` runs, the messages that joined at the next. */
  steerDuring(state: AgentState, stepNumber: number): void {
    const track = this.tracks.get(state.agentId());
    if (!track?.root) return;
    const messages = this.steering.joined.get(stepNumber + 1) ?? [];
    this.steering.joined.delete(stepNumber + 1);
    for (const message of messages) this.steerInto?.(message);
    if (stepNumber >= track.steps.length) this.steerLeftover();
  }

  private leftoverSteered = false;

  /**
   * The messages the recorded run ended with unjoined were steered in after its last step
   * boundary: steered again in its last step's model call, or with a person's stop, whichever
   * comes first.
   */
  private steerLeftover(): void {
    if (this.leftoverSteered) return;
    this.leftoverSteered = true;
    for (const message of this.steering.leftover) this.steerInto?.(message);
  }

  /** The recorded root run's first stop by a person, if any. */
  userStop(): StopSignal | undefined {
    return this.userStops()[0];
  }

  /** The recorded root run's stops by a person, in order. */
  userStops(): readonly StopSignal[] {
    const signals = this.recorded.execution()?.continuation().stopSignals ?? [];
    return signals.filter(isPersonStop);
  }

  /**
   * Sends the next person's stop if the recording places it here: `during` this place of the
   * root's run, with this state's steps recorded; a recording that does not place it, where
   * `unplaced` says (where the run goes past the recording). True if it did (the caller waits to be
   * stopped).
   */
  stopsHere(state: AgentState, during: string, unplaced = false): boolean {
    if (!this.isRoot(state)) return false;
    const stop = this.userStops()[this.stopsSent];
    const place = stop && stopPlace(stop);
    if (!place) return unplaced && this.deliverUserStop();
    if (place.during !== during || place.stepCount !== state.stepCount()) return false;
    return this.deliverUserStop();
  }

  /** Whether this state is the root agent's (a subagent's stop is its caller's to deliver). */
  isRoot(state: AgentState): boolean {
    return this.tracks.get(state.agentId())?.root === true;
  }

  /** The track of the agent whose state this is; a subagent's is claimed at its first call. */
  trackOf(state: AgentState): ReplayTrack {
    const known = this.tracks.get(state.agentId());
    if (known) return known;
    // a run of the recorded agent under another id (a fresh state given to `replayDriver` alone)
    if (state.parentAgentId() === null) {
      const root = this.tracks.get(this.recorded.agentId()) as ReplayTrack;
      this.tracks.set(state.agentId(), root);
      return root;
    }
    const parent = this.tracks.get(state.parentAgentId() ?? '');
    const parentLive = !parent || parent.live || (parent.root && this.isLiveStep(this.rootStep));
    const candidate = parentLive ? undefined : unclaimedChild(parent, state);
    if (!candidate && !parentLive) {
      throw new ReplayDivergenceError({
        stepNumber: this.rootStep,
        kind: 'tool-result',
        path: 'toolExecutions',
        recorded: null,
        replayed: `a subagent run on ${shown(state.messages()[0]?.content ?? '')}`,
      });
    }
    if (candidate) parent?.claimed.add(candidate);
    const created = track(candidate ?? state, false, candidate === undefined);
    this.tracks.set(state.agentId(), created);
    return created;
  }

  /** The request the replay of this recorded agent (the root, or a subagent's recording) stopped at. */
  requestDivergence(recorded: AgentState): ReplayDivergence | null {
    for (const found of this.tracks.values()) if (found.recorded === recorded) return found.divergence;
    return null;
  }

  /** Whether the root's step `stepNumber` runs live (at or after `fromStep`). */
  isLiveStep(stepNumber: number): boolean {
    return this.fromStep !== null && stepNumber >= this.fromStep;
  }

  /** Whether the tool calls of this state's step in flight run live. */
  runsLive(state: AgentState): boolean {
    const found = this.tracks.get(state.agentId());
    if (!found) return true;
    return found.live || (found.root && this.isLiveStep(state.stepCount() + 1));
  }

  /**
   * The stop a driver or tool of this state's agent asked for in the recording (an AgentStopError,
   * recorded as a StopRequested signal), to be asked for again; with `message`, the one it names.
   */
  recordedStop(state: AgentState, message?: string): AgentStopError | null {
    const recorded = this.tracks.get(state.agentId())?.recorded;
    const signals = recorded?.execution()?.continuation().toJSON().stopSignals ?? [];
    const signal = signals.find(
      (s) => s.reason === 'stop_requested' && (message === undefined || s.message === message),
    );
    return signal ? new AgentStopError(signal.message, { ...signal.context }, signal.source) : null;
  }

  /** The recorded execution of a call of the step in flight of this state's agent. */
  recordedExecution(state: AgentState, toolCallId: string): ToolExecution | undefined {
    const found = this.tracks.get(state.agentId());
    const step = found?.steps[state.stepCount()];
    return step?.toolExecutions().find((e) => e.toolCallId() === toolCallId);
  }

  /** The root's step in flight (set by the replay driver; its tool stage is where subagents start). */
  rootStep = 0;

  /** Sends a message steered into the replayed root run (set while it runs). */
  steerInto: ((message: Message) => void) | null = null;
}

function track(recorded: AgentState, root: boolean, live: boolean): ReplayTrack {
  // a step kept waiting for approval is the recording's last
  const waiting = recorded.currentStep();
  const steps = waiting ? [...recorded.steps(), waiting] : recorded.steps();
  return { recorded, steps, root, live, claimed: new Set(), checked: null, divergence: null };
}

function unclaimedChild(parent: ReplayTrack | undefined, state: AgentState): AgentState | undefined {
  if (!parent) return undefined;
  const task = state.messages()[0]?.content;
  const children = parent.steps.flatMap((step) => step.toolExecutions().map((e) => e.childState()));
  // a recording that ends waiting keeps its waiting (or crash-interrupted) children in its approval
  children.push(...Object.values(parent.recorded.approval()?.children ?? {}));
  for (const child of children)
    if (child && !parent.claimed.has(child) && child.messages()[0]?.content === task) return child;
  return undefined;
}

/**
 * Where the recording says a person's stop came (`during`, and the steps recorded by then), or
 * null when it does not say (a recording made before stops were placed).
 */
export function stopPlace(stop: StopSignal): { readonly during: string; readonly stepCount: number } | null {
  const { during, stepCount } = stop.context;
  return typeof during === 'string' && typeof stepCount === 'number' ? { during, stepCount } : null;
}
