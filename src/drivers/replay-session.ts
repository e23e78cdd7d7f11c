import type { AgentState } from '../state/agent-state';
import type { AgentStep } from '../state/agent-step';
import type { AppendOnlyList } from '../state/append-only-list';
import { AgentMachineError } from '../state/errors';
import type { Message } from '../state/message';
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
}

/**
 * The recordings of one replay, for the whole tree: the root's state, and the subagents' states
 * kept on its tool executions. A replayed subagent (a fresh agent id) is matched, at its first
 * model call, to its caller's first unclaimed recorded child with the same task.
 */
export class ReplaySession {
  private readonly tracks = new Map<string, ReplayTrack>();
  /** The root's first request divergence, if its run stopped at one. */
  requestDivergence: ReplayDivergence | null = null;

  constructor(
    readonly recorded: AgentState,
    /** Steps from this one on run live (`fromStep`); null: none. */
    readonly fromStep: number | null = null,
  ) {
    this.tracks.set(recorded.agentId(), track(recorded, true, false));
  }

  /** The track of the agent whose state this is; a subagent's is claimed at its first call. */
  trackOf(state: AgentState): ReplayTrack {
    const known = this.tracks.get(state.agentId());
    if (known) return known;
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

  /** The recorded execution of a call of the step in flight of this state's agent. */
  recordedExecution(state: AgentState, toolCallId: string): ToolExecution | undefined {
    const found = this.tracks.get(state.agentId());
    const step = found?.steps[state.stepCount()];
    return step?.toolExecutions().find((e) => e.toolCallId() === toolCallId);
  }

  /** The root's step in flight (set by the replay driver; its tool stage is where subagents start). */
  rootStep = 0;
}

function track(recorded: AgentState, root: boolean, live: boolean): ReplayTrack {
  return { recorded, steps: recorded.steps(), root, live, claimed: new Set(), checked: null };
}

function unclaimedChild(parent: ReplayTrack | undefined, state: AgentState): AgentState | undefined {
  if (!parent) return undefined;
  const task = state.messages()[0]?.content;
  for (const step of parent.steps)
    for (const execution of step.toolExecutions()) {
      const child = execution.childState();
      if (child && !parent.claimed.has(child) && child.messages()[0]?.content === task) return child;
    }
  return undefined;
}
