/**
 * DESIGN, The machine: `pending` "accepts `user.message` / `execute`"; a run in progress does not.
 * Sent while a run is in progress, they are refused out loud: an `event.refused` event with the
 * reason (RUN_IN_PROGRESS), seen by `actor.on` and by the run's `onEvent`, never dropped in silence.
 */

import { describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import type { Driver } from '../../src/drivers/driver';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import type { AgentEvent } from '../../src/state/loop-events';
import { recordEvents } from '../support/agents';

/** A driver whose first model call waits until `open()`; `called` resolves when it is waiting. */
function gatedDriver() {
  const inner = scriptedDriver([{ text: 'five' }, { text: 'six' }]);
  let open!: () => void;
  const gate = new Promise<void>((resolve) => {
    open = resolve;
  });
  let called!: () => void;
  const waiting = new Promise<void>((resolve) => {
    called = resolve;
  });
  let calls = 0;
  const driver: Driver = {
    name: 'gated',
    infer: async (state, context) => {
      if (calls++ === 0) {
        called();
        await gate;
      }
      return inner.infer(state, context);
    },
  };
  return { driver, open, waiting };
}

type Refused = Extract<AgentEvent, { type: 'event.refused' }>;

describe('user.message and execute during a run are refused, never dropped (DESIGN: pending accepts them)', () => {
  it('actor.on sees event.refused with RUN_IN_PROGRESS for each; the run goes on without the message', async () => {
    const { driver, open, waiting } = gatedDriver();
    const actor = createAgent({ driver }).createActor(AgentState.empty().withUserMessage('2 + 3?'));
    const refused: Refused[] = [];
    actor.on('event.refused', (e) => refused.push(e));
    const events = recordEvents(actor);
    actor.start();
    actor.send({ type: 'execute' });
    await waiting;
    const executionId = actor.getSnapshot().context.state.executionId();
    actor.send({ type: 'user.message', text: 'and 3 + 3?' });
    actor.send({ type: 'execute' });

    expect(refused.map((e) => [e.event, e.error.code])).toEqual([
      ['user.message', 'RUN_IN_PROGRESS'],
      ['execute', 'RUN_IN_PROGRESS'],
    ]);
    expect(refused.every((e) => e.executionId === executionId)).toBe(true);
    expect(refused[0]?.error.message).toContain('in progress');

    open();
    await new Promise<void>((resolve) => actor.on('execution.finished', () => resolve()));
    const state = actor.getSnapshot().context.state;
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.executionCount()).toBe(1);
    expect(
      state
        .messages()
        .filter((m) => m.role === 'user')
        .map((m) => m.content),
    ).toEqual(['2 + 3?']);
    expect(events.filter((e) => e.type === 'execution.started')).toHaveLength(1);
    actor.stop();
  });

  it("the run's onEvent listener gets the refusal too", async () => {
    const { driver, open, waiting } = gatedDriver();
    const agent = createAgent({ driver });
    const seen: AgentEvent[] = [];
    let root: { send: (event: { type: 'user.message'; text: string }) => void } | undefined;
    const run = agent.execute(AgentState.empty().withUserMessage('2 + 3?'), {
      onEvent: (e) => seen.push(e),
      // the inspector is how an app reaches the run's actor
      inspect: (event: InspectionEvent) => {
        if (event.type === '@xstate.actor' && event.actorRef.sessionId === event.rootId)
          root ??= event.actorRef as unknown as typeof root;
      },
    });
    await waiting;
    root?.send({ type: 'user.message', text: 'and 3 + 3?' });
    open();
    const final = await run;
    const refusals = seen.filter((e): e is Refused => e.type === 'event.refused');
    expect(refusals.map((e) => [e.event, e.error.code])).toEqual([['user.message', 'RUN_IN_PROGRESS']]);
    expect(final.messages().filter((m) => m.role === 'user')).toHaveLength(1);
  });
});

describe('a user.message whose text is not a string is refused out loud (it crashed the actor)', () => {
  it.each([
    ['a number', 42],
    ['missing', undefined],
    ['null', null],
  ])(
    'text that is %s: event.refused with INVALID_ARGUMENT; the actor takes the next message',
    async (_label, text) => {
      const actor = createAgent({ driver: scriptedDriver([{ text: 'five' }]) }).createActor(
        AgentState.empty(),
      );
      const refused: Refused[] = [];
      actor.on('event.refused', (e) => refused.push(e));
      actor.start();
      actor.send({ type: 'user.message', text } as unknown as { type: 'user.message'; text: string });
      expect(refused.map((e) => [e.event, e.error.code])).toEqual([['user.message', 'INVALID_ARGUMENT']]);
      expect(refused[0]?.error.message).toMatch(/user\.message.*text/);
      expect(actor.getSnapshot().status).toBe('active');
      actor.send({ type: 'user.message', text: '2 + 3?' });
      await new Promise<void>((resolve) => actor.on('execution.finished', () => resolve()));
      expect(actor.getSnapshot().context.state.finalResponse()).toBe('five');
      actor.stop();
    },
  );
});
