/**
 * Tool and text reports delivered as events of the agent actor, without a macrostep. A report
 * changes nothing in the agent's state: processed as an event (a transition, an `emit` action, a
 * snapshot), each one made a listened run a quarter slower (#38). Delivered here, it reaches the
 * actor's listeners (`actor.on`, so `onEvent`) as the machine's `emit` would, and its inspectors as
 * the same event received and the same `xstate.emit` action run; no snapshot, as its state is
 * the same.
 */
import type { AnyActorRef } from 'xstate';
import { StateId, statePath, type WorkerInput } from '../../machines/agentLoop';
import type { ReportEvent } from '../state/loop-events';

/**
 * How a worker reports (tool and text events) to its agent: only while the agent's run is in
 * progress, the one place that takes them (a report after the run ended, an aborted tool settling
 * late, has no one to go to); none when the run takes no reports (`WorkerInput.reports`).
 */
export function reporterFor({ agent, reports }: WorkerInput): (event: ReportEvent) => void {
  return (event) => {
    if (!reports) return;
    // live, not input: whether the run is still in progress when the report comes
    const snapshot = agent.getSnapshot();
    if (snapshot.status === 'active' && inProgress(snapshot.value)) deliverReport(agent, event);
  };
}

const IN_PROGRESS = statePath(StateId.inProgress);

/**
 * `snapshot.matches('inProgress')`, without parsing the path at every report: a top-level state
 * other than `inProgress` is atomic, so its value is a string.
 */
const inProgress = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && Object.hasOwn(value, IN_PROGRESS);

/**
 * The parts of an XState 5 actor this goes through (not public API: tests/inspect
 * report-inspection.test.ts pins what they do). Without them, the report is sent as an event.
 */
interface ActorInternals {
  readonly system: { _sendInspectionEvent(event: Record<string, unknown>): void };
  readonly _actorScope: { emit(event: ReportEvent): void };
  /** Effects of the macrostep in progress, run once its snapshot is set (XState's `emit` goes there too). */
  readonly _deferred: Array<() => void>;
  readonly mailbox: { readonly _current: unknown };
}

/** Delivers `report` as an event the agent actor `self` received and emitted at once. */
function deliverReport(self: AnyActorRef, report: ReportEvent): void {
  const actor = self as unknown as Partial<ActorInternals>;
  if (!actor._actorScope || !actor._deferred || !actor.mailbox || !actor.system) {
    self.send(report);
    return;
  }
  const internals = actor as ActorInternals;
  // During a macrostep of the agent (a worker answering at once), after that macrostep's own
  // events, in order, as the event queued behind it would have been.
  if (internals.mailbox._current !== null)
    internals._deferred.push(() => emitReport(self, internals, report));
  else emitReport(self, internals, report);
}

function emitReport(self: AnyActorRef, actor: ActorInternals, report: ReportEvent): void {
  actor.system._sendInspectionEvent({
    type: '@xstate.event',
    sourceRef: undefined,
    actorRef: self,
    event: report,
  });
  actor.system._sendInspectionEvent({
    type: '@xstate.action',
    actorRef: self,
    action: { type: 'xstate.emit', params: { event: report } },
  });
  actor._actorScope.emit(report);
}
