/** Running one path of the agent test model against the real runtime, checking invariants at every step. */
import { type InspectionEvent, SimulatedClock } from 'xstate';
import { type LoopSession, LoopTag } from '../../machines/agentLoop';
import type { AgentDefinition } from '../runtime/agent-definition';
import { type Agent, createAgent } from '../runtime/create-agent';
import type { InternalActorOptions } from '../runtime/run-to-outcome';
import type { AgentState } from '../state/agent-state';
import type { ExecutionBudget } from '../state/execution-budget';
import type { AgentEvent } from '../state/loop-events';
import type { Coverage } from './coverage';
import type { GraphPath } from './graph';
import { invariantViolations } from './invariants';
import { Puppet } from './puppets';
import { abstractState, answeringActor } from './test-model-events';
import {
  AgentTestModelError,
  type AgentTestStep,
  APPROVAL_TIMEOUT_EVENT,
  AUTO,
  type ModelEvent,
  type Snapshot,
  STALE,
  STALE_ERROR,
  TIME_LIMIT_SECONDS,
} from './test-model-vocabulary';
/** What a path's run starts from: the budget, session and state, and whether anyone listens. */
export interface PathStart {
  readonly budget: ExecutionBudget;
  readonly session: LoopSession | undefined;
  readonly initial: AgentState;
  readonly quiet: boolean;
}

export async function runPath(
  path: GraphPath<Snapshot, ModelEvent>,
  definition: (puppet: Puppet) => AgentDefinition,
  coverage: Coverage,
  { budget, session, initial, quiet }: PathStart,
  check?: (step: AgentTestStep) => void | Promise<void>,
): Promise<AgentState> {
  const puppet = new Puppet();
  const agent = createAgent(definition(puppet));
  const events: AgentEvent[] = [];
  const clock = new SimulatedClock();
  // quiet: inspected for coverage, run as no one listened (`reports` false)
  const options: InternalActorOptions = {
    inspect: (event: InspectionEvent) => coverage.record(event),
    session,
    clock,
    reports: !quiet,
  };
  const actor = agent.createActor(initial, options);
  let failure: unknown;
  actor.subscribe({ error: (error) => (failure = error) });
  actor.on('*', (event) => events.push(event as AgentEvent));
  actor.start();
  const history: AgentState[] = [];
  try {
    const steps = path.steps.filter((s) => s.event.type !== 'xstate.init');
    let index = 0;
    for (const [i, step] of steps.entries()) {
      const event = step.event;
      index++;
      if (event.type === APPROVAL_TIMEOUT_EVENT) clock.increment(TIME_LIMIT_SECONDS * 1000 + 1);
      else deliver(actor, puppet, event, index);
      // A subagent call finishes by itself: the state before it is passed through, not rested in.
      if (isAuto(steps[i + 1]?.event)) continue;
      await settle(actor, puppet, index, event);
      if (failure) throw failure;
      const snapshot = actor.getSnapshot();
      const state = snapshot.context.state;
      if (JSON.stringify(snapshot.value) !== JSON.stringify(step.state.value)) {
        throw new AgentTestModelError(
          `Step ${index} (${event.type}${event.behaviour ? `:${event.behaviour}` : ''}) left the path: expected ${JSON.stringify(step.state.value)}, the agent is in ${JSON.stringify(snapshot.value)}` +
            `\n  expected situation ${abstractState(step.state)}\n  actual situation   ${abstractState(snapshot)}`,
        );
      }
      const violations = invariantViolations({ snapshot, state, previous: history.at(-1), budget, events });
      if (violations.length)
        throw new AgentTestModelError(`Step ${index} (${event.type}): ${violations.join('; ')}`);
      history.push(state);
      await check?.({ index, event, expected: step.state, snapshot, state, events: [...events] });
    }
    return actor.getSnapshot().context.state;
  } finally {
    actor.stop();
  }
}

/** An event no puppet plays: the runtime gets there by itself. */
export function isAuto(event: ModelEvent | undefined): boolean {
  return event?.behaviour === AUTO;
}

function deliver(
  actor: ReturnType<Agent['createActor']>,
  puppet: Puppet,
  event: ModelEvent,
  index: number,
): void {
  const actorId = answeringActor(event.type);
  if (!actorId) {
    actor.send(event as never);
    return;
  }
  if (isAuto(event)) return; // the runtime gets there by itself
  if (event.behaviour === STALE || event.behaviour === STALE_ERROR) {
    actor.send(event as never); // no puppet plays it: it stands for an answer that came late
    return;
  }
  const puppetActor =
    actorId === 'toolExecutor'
      ? 'tool'
      : actorId === 'driver'
        ? 'driver'
        : actorId === 'checkpoint'
          ? 'store'
          : 'hooks';
  const call = puppet.take(puppetActor);
  if (!call) {
    throw new AgentTestModelError(
      `Step ${index} (${event.type}:${event.behaviour}): the agent is not waiting on its ${actorId} (in ${JSON.stringify(actor.getSnapshot().value)})`,
    );
  }
  // the puppet throws for error behaviours itself, as the real actor would
  call.resolve(event.behaviour);
}

/** Resolves once the agent waits on a puppet or rests in a state no puppet drives. */
function settle(
  actor: ReturnType<Agent['createActor']>,
  puppet: Puppet,
  index: number,
  event: ModelEvent,
): Promise<void> {
  const resting = () => {
    const snapshot = actor.getSnapshot();
    return (
      snapshot.matches('pending') ||
      snapshot.hasTag(LoopTag.outcome) ||
      snapshot.hasTag(LoopTag.awaitingDecisions)
    );
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      cleanup();
      reject(
        new AgentTestModelError(
          `Step ${index} (${event.type}): the agent neither finished nor called its model, tools or hooks within 2 s (in ${JSON.stringify(actor.getSnapshot().value)})`,
        ),
      );
    }, 2_000);
    const check = () => {
      if (puppet.hasPending() || resting()) {
        cleanup();
        // let the machine take the event the puppet call came from before reading its state
        setImmediate(resolve);
      }
    };
    const subscription = actor.subscribe(() => check());
    const cleanup = () => {
      clearTimeout(timer);
      subscription.unsubscribe();
      puppet.onCall(null);
    };
    puppet.onCall(check);
    check();
  });
}
