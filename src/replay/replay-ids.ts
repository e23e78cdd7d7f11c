/**
 * The fresh draws a replay keeps from its recording (the ids and clock readings a run draws, which
 * `firstDifference` skips), so that a replayed run is JSON-equal to the recorded one, ids and
 * timestamps included. The execution's id is kept where the replay starts (`agent-replay.ts`), the
 * step ids by the replay driver, the tool execution ids as each call ends (`recordedToolExecutionIds`);
 * the clock readings and the subagents' agent and execution ids once the replay has ended
 * (`withRecordedDraws`): the replayed run reads the real clock (its time budget counts from the
 * replay's start), and its state takes the recording's readings where it matches the recording.
 */
import type { Hook } from '../hooks/hook';
import { AgentState } from '../state/agent-state';
import { withFreshDrawsOf } from '../state/json-difference';
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

/**
 * The replayed state with the recording's clock readings and fresh ids (`withFreshDrawsOf`): the
 * whole state when `steps` is null (the replay followed the recording to its end), else the first
 * `steps` steps alone (those before a fork's live part, or before the first divergence), each
 * with its subagents' runs.
 */
export function withRecordedDraws(
  recorded: AgentState,
  replayed: AgentState,
  steps: number | null,
): AgentState {
  const from = plain(recorded);
  const to = plain(replayed);
  if (steps === null) return AgentState.fromParsedJson(withFreshDrawsOf(from, to));
  const own = from.execution?.stepExecutions ?? [];
  const stepExecutions = to.execution?.stepExecutions;
  if (!stepExecutions || steps < 1) return replayed;
  to.execution.stepExecutions = stepExecutions.map((step: unknown, i: number) =>
    i < steps && i < own.length ? withFreshDrawsOf(own[i], step) : step,
  );
  return AgentState.fromParsedJson(to);
}

/** The state's document, parsed here (so `fromParsedJson` may take its messages as they are). */
// biome-ignore lint/suspicious/noExplicitAny: a state's JSON document, walked by its field names
function plain(state: AgentState): any {
  return JSON.parse(JSON.stringify(state));
}
