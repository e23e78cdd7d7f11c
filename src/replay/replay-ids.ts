/**
 * The tool execution ids a replay keeps from its recording (with the `tool_execution_id` tags of
 * their messages), so that a replayed run is JSON-equal to the recorded one, ids included (only the
 * clocks are its own). The execution's id is kept where the replay starts (`agent-replay.ts`), the
 * step ids by the replay driver.
 */

import type { Hook } from '../hooks/hook';
import type { ReplaySession } from './replay-tracks';

/**
 * A hook (first of the replayed agent's, asking `current()` which replay it runs in) giving each tool execution of a replayed step the id of
 * the recorded one for the same call; a step running live keeps the fresh one.
 */
export function recordedToolExecutionIds(current: () => ReplaySession): Hook {
  return {
    name: 'replay:recordedIds',
    afterToolUse: (state, { toolExecution }) => {
      const session = current();
      if (session.runsLive(state)) return undefined;
      const id = session.recordedExecution(state, toolExecution.toolCallId())?.id();
      return id === undefined || id === toolExecution.id() ? undefined : toolExecution.withId(id);
    },
  };
}
