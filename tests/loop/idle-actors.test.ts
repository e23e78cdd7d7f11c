/**
 * Plain runs (`execute()` with no session, budget or actor option; listened or not) of one agent reuse
 * its agent actors: a run takes one resting at an outcome instead of making one (#38). A run on a
 * reused actor must end exactly as on a new one, whatever the run before it did.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as xstate from 'xstate';
import { z } from 'zod';
import { type ScriptEntry, type ScriptStep, scriptedDriver } from '../../src/drivers/scripted-driver';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import type { AgentEvent } from '../../src/state/loop-events';
import { StopReason } from '../../src/state/stop-reason';
import { defineTool } from '../../src/tools/define-tool';

vi.mock('xstate', async (importOriginal) => {
  const original = await importOriginal<typeof import('xstate')>();
  return { ...original, createActor: vi.fn(original.createActor) };
});

const add = defineTool({
  description: 'Add',
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});
const ADDING: ScriptStep[] = [
  { toolCalls: [{ name: 'add', args: { a: 2, b: 3 }, id: 'c1' }] },
  { text: '5' },
];
const agentWith = (script: ScriptEntry[]) => createAgent({ driver: scriptedDriver(script), tools: { add } });
const question = (text = '2 + 3?') => AgentState.empty().withUserMessage(text);
const agentActorsMade = () =>
  vi.mocked(xstate.createActor).mock.calls.filter(([logic]) => (logic as { id?: string }).id === 'agent')
    .length;

afterEach(() => vi.mocked(xstate.createActor).mockClear());

describe('quiet runs of one agent', () => {
  it('run one after another on one agent actor', async () => {
    const agent = agentWith(ADDING);
    for (let i = 0; i < 3; i++) expect((await agent.execute(question())).finalResponse()).toBe('5');
    expect(agentActorsMade()).toBe(1);
  });

  it('end as a listened run on a new actor does, each from the state it was given', async () => {
    const agent = agentWith(ADDING);
    const events: AgentEvent[] = [];
    const heard = await agentWith(ADDING).execute(question(), { onEvent: (e) => events.push(e) });
    await agent.execute(question('first'));
    const again = await agent.execute(question());
    expect(events.length).toBeGreaterThan(0);
    expect(again.toJSON()).toMatchObject({
      executionCount: heard.executionCount(),
      execution: { status: 'completed' },
    });
    expect(again.messages().map((m) => [m.role, m.content])).toEqual(
      heard.messages().map((m) => [m.role, m.content]),
    );
    expect(again.toolExecutions().map((e) => e.value())).toEqual([5]);
    expect(again.usage()).toEqual(heard.usage());
  });

  it('are not reached by the signal of a run before them, stopped or not', async () => {
    const slow: ScriptEntry[] = [{ text: 'late', delayMs: 20 }];
    const agent = agentWith(slow);
    const earlier = new AbortController();
    const stopped = agent.execute(question(), { signal: earlier.signal });
    earlier.abort();
    expect((await stopped).stopReason()).toBe(StopReason.UserRequested);
    const finished = new AbortController();
    await agent.execute(question(), { signal: finished.signal });
    const next = agent.execute(question());
    finished.abort();
    earlier.abort();
    const done = await next;
    expect(done.status()).toBe('completed');
    expect(done.finalResponse()).toBe('late');
    expect(agentActorsMade()).toBe(1);
  });

  it('start clean after a failed run, and alongside each other', async () => {
    let fail = true;
    const agent = agentWith([() => (fail ? { error: new Error('model down') } : ADDING[0]!), ADDING[1]!]);
    const failed = await agent.execute(question());
    expect(failed.status()).toBe('failed');
    fail = false;
    const runs = await Promise.all(Array.from({ length: 6 }, () => agent.execute(question())));
    for (const run of runs) {
      expect(run.status()).toBe('completed');
      expect(run.errors()).toEqual([]);
      expect(run.finalResponse()).toBe('5');
      expect(run.stepCount()).toBe(2);
    }
  });

  it('keep the options of a run that gives any: a budget of its own gets an actor of its own', async () => {
    const agent = agentWith(ADDING);
    await agent.execute(question());
    const capped = await agent.execute(question(), { budget: new ExecutionBudget({ maxSteps: 1 }) });
    expect(capped.stopReason()).toBe(StopReason.StepsLimitReached);
    expect((await agent.execute(question())).finalResponse()).toBe('5');
    expect(agentActorsMade()).toBe(2);
  });

  it('an agent actor at an outcome runs the state an `execute` carries', async () => {
    const agent = agentWith(ADDING);
    const actor = agent.createActor(question()).start();
    actor.send({ type: 'execute' });
    await xstate.waitFor(actor, (s) => s.hasTag('outcome'));
    actor.send({ type: 'execute', state: question('again') });
    const again = (await xstate.waitFor(actor, (s) => s.hasTag('outcome'))).context.state;
    actor.stop();
    expect(again.messages()[0]?.content).toBe('again');
    expect(again.executionCount()).toBe(1);
    expect(again.finalResponse()).toBe('5');
  });
});

describe('listened runs of one agent (#50)', () => {
  /** A run's events without what differs between two runs of the same script (ids, times). */
  const shapeOf = (events: readonly AgentEvent[]) =>
    events.map((event) => {
      const { agentId, executionId, durationMs, stepId, ...rest } = event as AgentEvent &
        Record<string, unknown>;
      return { ...rest, keys: Object.keys(event) };
    });

  it('run one after another on one agent actor of their own, each listener hearing its own run only', async () => {
    const agent = agentWith(ADDING);
    await agent.execute(question('quiet'));
    const heard: AgentEvent[][] = [[], [], []];
    for (const events of heard) await agent.execute(question(), { onEvent: (e) => events.push(e) });
    // one actor for the quiet run, one for the three listened runs
    expect(agentActorsMade()).toBe(2);
    const executions = heard.map((events) => new Set(events.map((e) => e.executionId)));
    for (const ids of executions) expect(ids.size).toBe(1);
    expect(new Set(executions.map((ids) => [...ids][0])).size).toBe(3);
    expect(shapeOf(heard[1] as AgentEvent[])).toEqual(shapeOf(heard[0] as AgentEvent[]));
    expect(shapeOf(heard[2] as AgentEvent[])).toEqual(shapeOf(heard[0] as AgentEvent[]));
  });

  it('hear every event, in order, with the content and sources an inspected run (XState emit) gives', async () => {
    const agent = agentWith(ADDING);
    const listened: [AgentEvent, number | null][] = [];
    const inspected: [AgentEvent, number | null][] = [];
    await agent.execute(question(), {
      onEvent: (e, s) => listened.push([e, s.step?.requestedToolCalls().length ?? null]),
    });
    await agent.execute(question(), {
      onEvent: (e, s) => inspected.push([e, s.step?.requestedToolCalls().length ?? null]),
      inspect: () => {},
    });
    expect(listened.map(([e]) => e.type)).toEqual([
      'execution.started',
      'step.started',
      'tool.started',
      'tool.finished',
      'step.finished',
      'continuation.evaluated',
      'step.started',
      'step.finished',
      'continuation.evaluated',
      'execution.finished',
    ]);
    expect(shapeOf(listened.map(([e]) => e))).toEqual(shapeOf(inspected.map(([e]) => e)));
    expect(listened.map(([, step]) => step)).toEqual(inspected.map(([, step]) => step));
  });

  it('hear nothing of a stopped run before them, not even a report its tool sends late', async () => {
    // the first call waits; the second lets the first settle (a late report of the stopped run)
    let settleFirst: (() => void) | undefined;
    const slow = defineTool({
      description: 'Waits, the first time',
      inputSchema: z.object({}),
      execute: async () => {
        if (!settleFirst) return new Promise<string>((resolve) => (settleFirst = () => resolve('late')));
        settleFirst();
        await new Promise((resolve) => setImmediate(resolve));
        return 'now';
      },
    });
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [{ name: 'slow', args: {}, id: 's1' }] }, { text: 'done' }]),
      tools: { slow },
    });
    const stop = new AbortController();
    const first = agent.execute(question(), {
      signal: stop.signal,
      onEvent: (e) => {
        if (e.type === 'tool.started') stop.abort();
      },
    });
    expect((await first).status()).toBe('stopped');
    const second: AgentEvent[] = [];
    const run = agent.execute(question(), { onEvent: (e) => second.push(e) });
    expect((await run).finalResponse()).toBe('done');
    const ids = new Set(second.map((e) => e.executionId));
    expect(ids.size).toBe(1);
    expect(second.filter((e) => e.type === 'tool.finished')).toHaveLength(1);
  });
});
