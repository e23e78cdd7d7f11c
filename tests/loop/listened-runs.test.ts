/**
 * Issue #38: a run whose only observer is `onEvent` (no inspector, no tracer, no actor held by the
 * caller) skips the states where nothing happens, as a run no one listens to does (`beforeStep`
 * without beforeStep hooks, `finalizing` without a session), and emits exactly the events an
 * inspected run, which takes every state, emits.
 */
import { describe, expect, it } from 'vitest';
import { createActor, type InspectionEvent, waitFor } from 'xstate';
import { z } from 'zod';
import type { Driver } from '../../src/drivers/driver';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { Hook } from '../../src/hooks/hook';
import { createAgent } from '../../src/runtime/create-agent';
import { listened } from '../../src/runtime/run-to-outcome';
import { AgentState } from '../../src/state/agent-state';
import { AgentStopError } from '../../src/state/agent-stop-error';
import { ExecutionBudget } from '../../src/state/execution-budget';
import type { AgentEvent } from '../../src/state/loop-events';
import { Message } from '../../src/state/message';
import { add, addCall, failing } from '../support/agents';

type Options = Parameters<typeof createAgent>[0];
const question = () => AgentState.empty().withUserMessage('What is 2 + 3?');
const twoSteps = () => scriptedDriver([{ toolCalls: [addCall()] }, { text: '5' }]);
const stopping: Driver = {
  name: 'stops',
  infer: () => {
    throw new AgentStopError('nothing to do', {}, 'driver');
  },
};
const broken: Driver = {
  name: 'broken',
  infer: () => {
    throw new Error('model down');
  },
};
const allStages: Hook = {
  name: 'every-stage',
  beforeExecution: (s) => s,
  beforeStep: (s) => s,
  afterStep: (s) => s,
  afterExecution: (s) => s,
  onError: () => undefined,
};

/** Agents of every kind of run: tools or none, hooks of each stage, a stop, failures, a budget. */
const MATRIX: Record<string, () => Options> = {
  'an answer': () => ({ driver: scriptedDriver([{ text: '5' }]) }),
  'a tool step, then an answer': () => ({ driver: twoSteps(), tools: { add } }),
  'a failing tool': () => ({
    driver: scriptedDriver([{ toolCalls: [{ name: 'failing', args: {}, id: 'f1' }] }, { text: 'sorry' }]),
    tools: { failing },
  }),
  'hooks of every stage': () => ({ driver: twoSteps(), tools: { add }, hooks: [allStages] }),
  'beforeStep hooks only': () => ({ driver: twoSteps(), tools: { add }, hooks: [{ beforeStep: (s) => s }] }),
  'afterStep hooks only': () => ({ driver: twoSteps(), tools: { add }, hooks: [{ afterStep: (s) => s }] }),
  'afterExecution hooks only': () => ({
    driver: twoSteps(),
    tools: { add },
    hooks: [{ afterExecution: (s) => s }],
  }),
  'a hook asking to continue': () => ({
    driver: scriptedDriver([{ text: 'one' }, { text: 'two' }]),
    hooks: [{ afterStep: (s) => (s.stepCount() < 2 ? s.withContinuationRequested() : s) }],
  }),
  'a stop from the model': () => ({ driver: stopping, hooks: [allStages] }),
  'a stop from an afterStep hook': () => ({
    driver: twoSteps(),
    tools: { add },
    hooks: [
      {
        afterStep: () => {
          throw new AgentStopError('enough', {}, 'hook');
        },
      },
    ],
  }),
  'a failed model call': () => ({ driver: broken }),
  'a failed model call with hooks': () => ({ driver: broken, hooks: [allStages] }),
  'a failing afterExecution hook': () => ({
    driver: twoSteps(),
    tools: { add },
    hooks: [
      {
        afterExecution: () => {
          throw new Error('upload failed');
        },
        onError: () => undefined,
      },
    ],
  }),
  'the step budget used up': () => ({
    driver: scriptedDriver([(s) => ({ toolCalls: [addCall(s.stepCount(), 1)] })]),
    tools: { add },
    budget: new ExecutionBudget({ maxSteps: 3 }),
  }),
  'the token budget used up': () => ({
    driver: scriptedDriver([() => ({ toolCalls: [addCall()], usage: { inputTokens: 60, outputTokens: 0 } })]),
    tools: { add },
    budget: new ExecutionBudget({ maxTokens: 100 }),
  }),
  'structured output': () => ({
    driver: scriptedDriver([{ text: '{"celsius":24}' }]),
    responseFormat: z.object({ celsius: z.number() }),
  }),
};

/** Ids, times and durations differ between two runs; the rest of each event is compared. */
const VARYING = /(^id$|Id$|At$|^at$|timestamp|duration|^createdAt$)/;
function comparable(events: readonly AgentEvent[]): unknown[] {
  const strip = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(strip);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => !VARYING.test(key))
        .map(([key, v]) => [key, strip(v)]),
    );
  };
  return events.map((event) => strip(JSON.parse(JSON.stringify(event))));
}

async function eventsOf(options: Options, inspected: boolean): Promise<AgentEvent[]> {
  const events: AgentEvent[] = [];
  const onEvent = (event: AgentEvent) => void events.push(event);
  const agent = createAgent(options);
  await agent.execute(question(), inspected ? { onEvent, inspect: () => {} } : { onEvent });
  return events;
}

describe('a run listened to with onEvent alone emits what an inspected run emits (#38)', () => {
  for (const [name, options] of Object.entries(MATRIX))
    it(name, async () => {
      const heard = await eventsOf(options(), false);
      const inspected = await eventsOf(options(), true);
      expect(heard.length).toBeGreaterThan(2);
      expect(comparable(heard)).toEqual(comparable(inspected));
    });

  it('a message steered in during a tool call', async () => {
    const run = async (observed: boolean) => {
      let release!: () => void;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      const agent = createAgent({
        driver: scriptedDriver([{ toolCalls: [{ name: 'wait', args: {}, id: 'w1' }] }, { text: 'done' }]),
        tools: {
          wait: { description: 'Waits', inputSchema: z.object({}), execute: () => gate.then(() => 'ok') },
        },
      });
      const input = { ...agent.inputFor(question(), undefined, undefined, true), observed };
      const actor = createActor(agent.machine, { input }).start();
      const events: AgentEvent[] = [];
      actor.on('*', (event) => {
        events.push(event);
        if (event.type === 'tool.started') {
          actor.send({ type: 'steer', message: Message.user('also 4 + 4') });
          release();
        }
      });
      actor.send({ type: 'execute' });
      await waitFor(actor, (s) => s.hasTag('outcome'));
      actor.stop();
      return events;
    };
    const heard = await run(false);
    expect(heard.map((e) => e.type)).toContain('message.steered');
    expect(comparable(heard)).toEqual(comparable(await run(true)));
  });
});

describe('a run listened to with onEvent alone skips the states where nothing happens (#38)', () => {
  /** The states a run of `options` enters, on its full chart (it reports), `observed` or not. */
  async function statesOf(observed: boolean): Promise<string[]> {
    const agent = createAgent({ driver: twoSteps(), tools: { add } });
    const input = { ...agent.inputFor(question(), undefined, undefined, true), observed };
    const states: string[] = [];
    const actor = createActor(agent.machine, {
      input,
      inspect: (event: InspectionEvent) => {
        // every microstep, the transient states (beforeStep, finalizing) included
        if (event.type === '@xstate.microstep' && event.actorRef === actor)
          states.push(JSON.stringify((event.snapshot as unknown as { value: unknown }).value));
      },
    }).start();
    actor.send({ type: 'execute' });
    await waitFor(actor, (s) => s.hasTag('outcome'));
    actor.stop();
    return states;
  }

  it('no beforeStep after the first step, no finalizing', async () => {
    const heard = await statesOf(false);
    // the first step's beforeStep stays (its step.started follows execution.started)
    expect(heard.filter((s) => s.includes('beforeStep'))).toHaveLength(1);
    expect(heard.filter((s) => s.includes('inference'))).toHaveLength(2);
    expect(heard.some((s) => s.includes('finalizing'))).toBe(false);
    // an observed run (an inspector, a tracer) takes every state
    const observed = await statesOf(true);
    expect(observed.filter((s) => s.includes('beforeStep'))).toHaveLength(2);
    expect(observed.some((s) => s.includes('finalizing'))).toBe(true);
  });

  it('execute() with onEvent alone runs unobserved; with an inspector, observed', () => {
    const onEvent = () => {};
    expect(listened({}, onEvent)).toMatchObject({ reports: true, observed: false });
    expect(listened({ inspect: () => {} }, onEvent)).toMatchObject({ reports: true, observed: true });
    expect(listened({}, undefined)).toMatchObject({ reports: false, observed: false });
  });
});
