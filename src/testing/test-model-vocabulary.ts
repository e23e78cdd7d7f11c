/** The agent test model's shared vocabulary: its options, paths and steps, probe names, behaviours. */
import type { AnyEventObject, SnapshotFrom } from 'xstate';
import { StateId } from '../../machines/agentLoop';
import type { Hook } from '../hooks/hook';
import type { ReplayOptions, ReplayResult } from '../replay/replay-options';
import type { AgentDefinition } from '../runtime/agent-definition';
import type { Agent } from '../runtime/create-agent';
import { AgentError } from '../state/agent-error';
import type { AgentState } from '../state/agent-state';
import { AgentMachineError } from '../state/errors';
import type { ExecutionBudget } from '../state/execution-budget';
import type { HookStage } from '../state/hook-stage';
import type { AgentEvent } from '../state/loop-events';

/** The tool the test model's model calls; its outcome is decided by the path. */
export const PROBE_TOOL = 'probe';
/** The subagent the test model's model may call; it answers at once. */
export const PROBE_SUBAGENT = 'helper';
/** The tool that needs a person's approval; it runs at once when approved. */
export const PROBE_GATE = 'gate';
/** The subagent whose one gate call waits for a decision (an approval inside a child); then it answers. */
export const PROBE_APPROVER = 'approver';
export const APPROVAL_TIMEOUT_EVENT = `xstate.after.approvalTimeout.${StateId.waitingForDecisions.slice(1)}`;
/** The time budget of the test model (its approval wait can time out). */
export const TIME_LIMIT_SECONDS = 3_600;

export type Snapshot = SnapshotFrom<Agent['machine']>;
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
  /**
   * Probe hooks at every stage, so hook outcomes (ok, continue, throw, stop) are explored. Default
   * true. A list of stages probes those only (the agent has no hooks at the others).
   */
  readonly probeHooks?: boolean | readonly HookStage[];
  /** Let the model call a probe subagent. Default true. */
  readonly subagent?: boolean;
  /** Executions per path (a second one via `user.message`). Default 2. */
  readonly executions?: number;
  /** Checkpoint to a probe session store whose saves succeed or fail as the path says. Default true. */
  readonly probeStore?: boolean;
  /** Let the model call a tool that needs approval, and explore decisions and the timeout. Default true. */
  readonly approvals?: boolean;
  /** Start from a state saved while awaiting approval (as `agent.decide()` does). Default false. */
  /**
   * `'inSubagent'`: start from a step saved while its `approver` subagent's gate call awaits
   * approval (the waiting tree a root session checkpoints), as after a crash between request and
   * decision.
   */
  readonly startAwaitingApproval?: boolean | 'inSubagent';
  /**
   * Start from an execution saved with its final answer recorded but not finalized (a crash, or a
   * worker closed, in between), as `agent.resume()` loads it. Default false.
   */
  readonly startAfterFinalStep?: boolean;
  /**
   * Run as `execute()` runs when no one listens (no `onEvent`, no inspector of yours): the chart
   * then skips the states where nothing would happen (`finalizing` without a session, `beforeStep`
   * without its hooks) and emits no events. Default false.
   */
  readonly quiet?: boolean;
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
  /**
   * Replays the final state of `run()` (`agent.replay`) with the hooks answering as the path made
   * them answer in its last execution (past those answers, `pass`: a hook the path left waiting is
   * where the recording ends); resolves with the replay and its divergence (null: none).
   */
  replay(recorded: AgentState, options?: ReplayOptions): Promise<ReplayResult>;
}

/** Which of a kind of paths to list. */
export interface PathChoice {
  /**
   * Only a few that together take every step of the chart (state, event type, next state) the
   * whole list takes, chosen deterministically: a fast tier of a model-based suite, where every
   * path is CI's. Default false (every path).
   */
  readonly covering?: boolean;
}

/** A run left its path, or broke an invariant; the message names the step and what differed. */
export class AgentTestModelError extends AgentMachineError {
  static override get name(): string {
    return 'AgentTestModelError';
  }

  constructor(message: string) {
    super('AGENT_TEST_MODEL', message);
  }
}

export const USAGE = { inputTokens: 6, outputTokens: 4 };
export const AUTO = 'auto';
/** A worker answer to an earlier request: delivered as it is, no puppet plays it. */
export const STALE = 'stale';
export const STALE_ERROR = 'staleError';
export const probeError = AgentError.of('ProbeError', 'abstraction only');
export const SUBAGENT_USAGE = { inputTokens: 3, outputTokens: 2 };
export const hookStageOf: Record<string, HookStage> = {
  beforeExecution: 'beforeExecution',
  beforeStep: 'beforeStep',
  afterStep: 'afterStep',
  failing: 'onError',
  afterExecution: 'afterExecution',
  failingAfterExecution: 'onError',
};
