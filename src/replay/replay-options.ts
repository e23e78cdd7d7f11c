import type { AgentState } from '../state/agent-state';
import type { AgentEvent } from '../state/loop-events';
import type { ReplayDivergence } from './replay-tracks';

export interface ReplayOptions {
  /**
   * `'recorded'` (default): each tool call ends as recorded, no tool runs. `'live'`: the agent's
   * tools run and their results are compared with the recorded ones.
   */
  readonly tools?: 'recorded' | 'live';
  /**
   * Fork: the steps before this one (1-based) are replayed and compared, this one and the next
   * run live on the agent's own model and tools.
   */
  readonly fromStep?: number;
  readonly signal?: AbortSignal;
  readonly onEvent?: (event: AgentEvent) => void;
}

export interface ReplayResult {
  /** The replayed run's final state. */
  readonly state: AgentState;
  /** Null when the replay equals the recording (steps, calls, results, status, stop reason, usage). */
  readonly divergence: ReplayDivergence | null;
}
