import type { Recording } from '../replay/replay-driver';
import type { ReplayOptions, ReplayResult } from '../replay/replay-options';
import { type ReplayDivergence, shown } from '../replay/replay-tracks';
import type { Agent } from '../runtime/agent-actor';
import { AgentMachineError } from '../state/errors';

/** A replay that diverged from its recording, as `expectReplay` reports it. */
export class ReplayAssertionError extends AgentMachineError {
  static override get name(): string {
    return 'ReplayAssertionError';
  }

  constructor(
    readonly divergence: ReplayDivergence,
    readonly result: ReplayResult,
  ) {
    super('REPLAY_DIVERGED', describeDivergence(divergence));
  }
}

/**
 * Asserts that `agent` replays `recorded` with no divergence (vitest, jest, node:test: it throws
 * an Error with the divergence as a readable diff) and resolves with the replay.
 *
 * @example
 * it('replays the recorded support chat', async () => {
 *   await expectReplay(agent, (await store.load('chat-42'))!.state);
 * });
 */
export async function expectReplay(
  agent: Agent,
  recorded: Recording,
  options: ReplayOptions = {},
): Promise<ReplayResult> {
  const result = await agent.replay(recorded, options);
  if (result.divergence) throw new ReplayAssertionError(result.divergence, result);
  return result;
}

/**
 * The divergence as a few lines: where, then `- recorded` and `+ replayed`.
 *
 * @example
 * describeDivergence({ stepNumber: 2, kind: 'tool-result', path: 'toolExecutions[0].value', recorded: 5, replayed: 6 });
 * // 'The replay diverged at step 2 (tool-result) at toolExecutions[0].value\n- recorded: 5\n+ replayed: 6'
 */
export function describeDivergence(divergence: ReplayDivergence): string {
  return [
    `The replay diverged at step ${divergence.stepNumber} (${divergence.kind}) at ${divergence.path}`,
    `- recorded: ${shown(divergence.recorded)}`,
    `+ replayed: ${shown(divergence.replayed)}`,
  ].join('\n');
}
