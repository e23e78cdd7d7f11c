import { createServer } from 'node:net';
import { createInspector, createWebSocketInspector, type StatelyInspectionEvent } from '@statelyai/inspect';
import { describe, expect, it } from 'vitest';
import { WebSocketServer } from 'ws';
import {
  combineInspectors,
  sanitizeAgentContext,
  sanitizeAgentEvent,
  summarizeAgentState,
} from '../../src/inspect/stately';
import { recordTrace } from '../../src/inspect/trace-recorder';
import { ExecutionStatus } from '../../src/state/execution-status';
import { StopReason } from '../../src/state/stop-reason';
import { waitForState } from '../support/agents';
import { FINAL_ANSWER, question, weatherAgent } from './support';

type Snapshot = Extract<StatelyInspectionEvent, { type: '@xstate.snapshot' }> & {
  snapshot: { value?: unknown; context?: unknown };
};
const isRootCompleted = (e: StatelyInspectionEvent) =>
  e.type === '@xstate.snapshot' && (e as Snapshot).snapshot.value === 'completed';

/** A port on 127.0.0.1 that nothing listens on: taken from the OS, then released. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  return port;
}

describe('@statelyai/inspect with an agent', () => {
  it('receives the run through createInspector({ send }); its sends are deferred', async () => {
    const events: StatelyInspectionEvent[] = [];
    let sawCompletion: () => void = () => {};
    const completed = new Promise<void>((resolve) => {
      sawCompletion = resolve;
    });
    const inspector = createInspector(
      {
        send(event) {
          events.push(event);
          if (isRootCompleted(event)) sawCompletion();
        },
      },
      { sanitizeContext: sanitizeAgentContext, sanitizeEvent: sanitizeAgentEvent },
    );
    const actor = weatherAgent().createActor(question(), { inspect: inspector.inspect });
    actor.subscribe({ error: (error) => expect.fail(String(error)) });
    actor.start();
    actor.send({ type: 'execute' });
    // Nothing has been sent yet: the inspector defers its sends to a later task.
    expect(events).toHaveLength(0);

    await waitForState(actor, (s) => s.value === 'completed');
    const state = actor.getSnapshot().context.state;
    expect(state.status()).toBe(ExecutionStatus.Completed);
    await completed; // the deferred sends arrive after an await
    actor.stop();

    const root = events.find((e) => e.type === '@xstate.actor' && e.sessionId === actor.sessionId);
    expect(root).toBeDefined();
    expect((root as Extract<StatelyInspectionEvent, { type: '@xstate.actor' }>).definition).toContain(
      '"id":"agent"',
    );
    const names = events.filter((e) => e.type === '@xstate.actor').map((e) => (e as { name: string }).name);
    expect(names).toEqual(['agent', 'driver', 'toolExecutor']);
    const values = events
      .filter((e): e is Snapshot => e.type === '@xstate.snapshot' && e.sessionId === actor.sessionId)
      .map((e) => JSON.stringify(e.snapshot.value));
    expect(values[0]).toBe('"pending"');
    expect(values).toContain('{"inProgress":{"step":"tools"}}');
    // The sanitizers show the AgentState as a summary, not the whole conversation.
    const last = events.filter(isRootCompleted).at(-1) as Snapshot;
    expect(last.snapshot.context).toMatchObject({
      state: {
        agentId: state.agentId(),
        status: 'completed',
        stopReason: StopReason.Completed,
        stepCount: 3,
        lastStepType: 'final_response',
        finalResponseLength: FINAL_ANSWER.length,
      },
    });
    const done = events.find(
      (e) => e.type === '@xstate.event' && e.event.type === 'driver.done',
    ) as unknown as { event: { output: { stepCount: number } } };
    expect(done.event.output).toMatchObject({ stepCount: 0, status: 'in_progress' });
    // Step 2's snapshot shows its tool error.
    const afterStep2 = events.filter(
      (e): e is Snapshot =>
        e.type === '@xstate.snapshot' &&
        e.sessionId === actor.sessionId &&
        ((e as Snapshot).snapshot.context as { state?: { stepCount?: number } } | undefined)?.state
          ?.stepCount === 2,
    );
    expect(afterStep2.at(-1)?.snapshot.context).toMatchObject({
      state: {
        lastStepType: 'error',
        lastStepErrors: ['Error'],
        lastToolCalls: ['lookup', 'forecast'],
      },
    });
  });

  it('summarizes a state and its JSON alike', async () => {
    const state = await weatherAgent().execute(question());
    expect(summarizeAgentState(JSON.parse(JSON.stringify(state)))).toEqual(summarizeAgentState(state));
    const midway = state.withCurrentStep(state.lastStep()!).toJSON();
    expect(summarizeAgentState(midway as never).stepCount).toBe(3);
  });

  it('an inspector pointing at a closed port on 127.0.0.1 does not disturb the run', async () => {
    const url = `ws://127.0.0.1:${await closedPort()}`;
    const baseline = await weatherAgent().execute(question());
    const inspector = createWebSocketInspector({ url });
    const recorder = recordTrace();
    try {
      const state = await weatherAgent().execute(question(), {
        inspect: combineInspectors(inspector.inspect, recorder.inspect),
      });
      expect(state.status()).toBe(ExecutionStatus.Completed);
      expect(state.stopReason()).toBe(StopReason.Completed);
      expect(state.finalResponse()).toBe(baseline.finalResponse());
      expect(state.steps().map((s) => s.stepType())).toEqual(baseline.steps().map((s) => s.stepType()));
      // The other observer saw the whole run.
      expect(
        recorder.trace().entries.some((e) => e.kind === 'emitted' && e.type === 'execution.finished'),
      ).toBe(true);
    } finally {
      inspector.stop();
    }
  });

  it('createWebSocketInspector delivers the run to a local WebSocket server', async () => {
    const server = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    const received: StatelyInspectionEvent[] = [];
    const completed = new Promise<void>((resolve) => {
      server.on('connection', (socket) =>
        socket.on('message', (data) => {
          const event = JSON.parse(String(data)) as StatelyInspectionEvent;
          received.push(event);
          if (isRootCompleted(event)) resolve();
        }),
      );
    });
    const inspector = createWebSocketInspector({
      url: `ws://127.0.0.1:${port}`,
      sanitizeContext: sanitizeAgentContext,
      sanitizeEvent: sanitizeAgentEvent,
    });
    try {
      const state = await weatherAgent().execute(question(), { inspect: inspector.inspect });
      expect(state.status()).toBe(ExecutionStatus.Completed);
      await completed;
      expect(received.filter((e) => e.type === '@xstate.actor').length).toBe(3);
      const last = received.filter(isRootCompleted).at(-1) as Snapshot;
      expect(last.snapshot.context).toMatchObject({ state: { status: 'completed', stepCount: 3 } });
    } finally {
      inspector.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('combineInspectors', () => {
  it('gives every observer every event, in order; functions and observers alike', () => {
    const seen: string[] = [];
    const inspect = combineInspectors((e) => seen.push(`f:${e.type}`), undefined, {
      next: (e) => seen.push(`o:${e.type}`),
    });
    const actor = weatherAgent().createActor(question(), { inspect });
    actor.start();
    actor.stop();
    expect(seen.slice(0, 4)).toEqual([
      'f:@xstate.actor',
      'o:@xstate.actor',
      'f:@xstate.event',
      'o:@xstate.event',
    ]);
  });
});
