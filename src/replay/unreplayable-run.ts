/**
 * The recorded runs a replay refuses up front: an input from outside that the recording shows but
 * that a replay cannot send again at the same point.
 */

import type { AgentState } from '../state/agent-state';
import { AgentMachineError } from '../state/errors';
import { STEERED } from '../state/message';
import { type ReplaySession, stopPlace } from './replay-tracks';

/**
 * Why a recorded run cannot be replayed: `stop-while-saving`, a person's stop came while a step was
 * saved (the replay saves nothing, so it has no such point); `steered-after-last-step`, a message
 * was steered in after a run's final answer had ended it (nothing stopped it: steered at any point
 * of the replay's steps, it would make one more step; the recording does not say when it came);
 * `subagent-run-not-kept`, a person's stop or an approval timeout ended a subagent call, and the
 * subagent's run was not kept with the ended call, so it has nothing to answer from (a stop while
 * the subagent ran; a call ended while its subagent waited keeps it, except in older recordings);
 * `subagent-decision-not-carried-out`, such a call kept the subagent's run, but a decision a person
 * took inside it was not carried out before the call ended (taken after the deadline, or before a
 * stop while other calls still waited): the replay has no point at which to send it again.
 */
export type UnreplayableReason =
  | 'stop-while-saving'
  | 'steered-after-last-step'
  | 'subagent-run-not-kept'
  | 'subagent-decision-not-carried-out';

/** The recording holds an input from outside that its replay cannot send again (see `reason`). */
export class UnreplayableRunError extends AgentMachineError {
  static override get name(): string {
    return 'UnreplayableRunError';
  }

  constructor(
    /** The step (1-based) of the recorded run the input came at. */
    readonly stepNumber: number,
    readonly reason: UnreplayableReason,
    detail: string,
  ) {
    super(
      'REPLAY_UNREPLAYABLE',
      `The recorded run cannot be replayed (${reason}) at step ${stepNumber}: ${detail}. Compare it by other means, or record the run again without that input`,
    );
  }
}

/** The places of a run a replay cannot stop at: where it waits on a save (`recordUserStop`'s `during`). */
const SAVING = new Set(['persist', 'intent', 'record', 'continueOrStop', 'checkSignals', 'inProgress']);

/** How a call is ended from outside while it runs: a person's stop, the approval timeout. */
const ENDED_FROM_OUTSIDE = new Set(['ABORTED', 'APPROVAL_TIMEOUT']);

/** Throws UnreplayableRunError when the recording holds an input a replay cannot send again. */
export function refuseUnreplayable(
  recorded: AgentState,
  session: ReplaySession,
  subagents: readonly string[],
): void {
  const place = session
    .userStops()
    .map(stopPlace)
    .find((p) => p !== null && SAVING.has(p.during));
  if (place)
    throw new UnreplayableRunError(
      place.stepCount + 1,
      'stop-while-saving',
      `a person's stop came while the run was in '${place.during}'`,
    );
  // unjoined after a final answer that nothing stopped: steered in after the run's decision to end
  const late = recorded.steeredMessages().filter((m) => m.metadata[STEERED] === true);
  if (late.length > 0 && recorded.status() === 'completed' && recorded.stopSignal() === null)
    throw new UnreplayableRunError(
      recorded.stepCount(),
      'steered-after-last-step',
      `${late.length} message(s) steered in were left for the next execution (${JSON.stringify(late[0]?.content)})`,
    );
  const waiting = recorded.currentStep();
  const steps = waiting ? [...recorded.steps(), waiting] : recorded.steps();
  for (const [i, step] of steps.entries()) {
    const ended = step
      .toolExecutions()
      .filter((e) => ENDED_FROM_OUTSIDE.has(e.error()?.code ?? '') && subagents.includes(e.toolCall().name));
    for (const call of ended) {
      const child = call.childState();
      const named = `the subagent call '${call.toolCallId()}' (${call.toolCall().name}) ended ${call.error()?.code}`;
      if (!child)
        throw new UnreplayableRunError(i + 1, 'subagent-run-not-kept', `${named} and its run was not kept`);
      if (holdsDecisions(child))
        throw new UnreplayableRunError(
          i + 1,
          'subagent-decision-not-carried-out',
          `${named} with a decision taken inside it not carried out`,
        );
    }
  }
}

/** A waiting state (or a subagent waiting inside it) holds a decision not yet carried out. */
function holdsDecisions(state: AgentState): boolean {
  const approval = state.approval();
  if (!approval) return false;
  return Object.keys(approval.decisions).length > 0 || Object.values(approval.children).some(holdsDecisions);
}
