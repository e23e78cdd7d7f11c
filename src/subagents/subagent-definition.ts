import { AgentMachineError } from '../state/errors';

/**
 * The subagents an agent may call, and the depth policy. The root's `maxDepth` (root = depth 0)
 * governs the whole tree; a child inherits its parent's subagents unless it names its own.
 */
export interface SubagentsConfig<D> {
  /** Default 3. */
  readonly maxDepth?: number;
  readonly agents: Readonly<Record<string, D>>;
}

export const DEFAULT_MAX_DEPTH = 3;

/** A subagent call that would go deeper than `maxDepth`: not spawned, reported to the model. */
export class SubagentDepthExceededError extends AgentMachineError {
  static override get name(): string {
    return 'SubagentDepthExceededError';
  }

  constructor(
    readonly subagent: string,
    readonly depth: number,
    readonly maxDepth: number,
  ) {
    super(
      'SUBAGENT_DEPTH_EXCEEDED',
      `Subagent '${subagent}' was not started: it would run at depth ${depth}, deeper than maxDepth ${maxDepth}. Do the task yourself or with your tools.`,
    );
  }
}

export { SubagentFailedError } from '../state/subagent-failed-error';
