/**
 * Where the loop follows the seeds to the letter: status follows errors (seed 000's status table),
 * every started step closes its cycle (seed 003; the PHP loop's AfterStep in a `finally`), stops from
 * any hook, and a failure evaluates the continuation (seed 004, recordError).
 */
import { describe, expect, it } from 'vitest';
import type { Driver } from '../../src/drivers/driver';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { Hook } from '../../src/hooks/hook';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { AgentStopError } from '../../src/state/agent-stop-error';
import { ExecutionStatus } from '../../src/state/execution-status';
import type { AgentEvent } from '../../src/state/loop-events';
import { StopReason } from '../../src/state/stop-reason';
import { StopSignal } from '../../src/state/stop-signal';
import { add, addCall } from '../support/agents';

const question = () => AgentState.empty().withUserMessage('What is 2 + 3?');
const modelDown: Driver = {
  name: 'down',
  infer: async () => {
    throw new Error('model unavailable');
  },
};

async function run(options: Parameters<typeof createAgent>[0], state = question()) {
  const events: AgentEvent[] = [];
  const final = await createAgent(options).execute(state, { onEvent: (e) => events.push(e) });
  return { final, events, types: events.map((e) => e.type) };
}

describe('status follows errors, not the name of the reason', () => {
  it('a hook that gives up with RetryLimitReached when no error was recorded ends the run Stopped', async () => {
    let rounds = 0;
    const selfCritic: Hook = {
      name: 'self-critic',
      afterStep: (state) => {
        rounds++;
        return rounds < 3
          ? state.withContinuationRequested()
          : state.withStopSignal(
              StopSignal.of(StopReason.RetryLimitReached, 'critic gave up after 3 rounds', {}, 'self-critic'),
            );
      },
    };
    const { final } = await run({
      driver: scriptedDriver([{ text: 'draft 1' }, { text: 'draft 2' }, { text: 'draft 3' }]),
      hooks: [selfCritic],
    });
    expect(final.errors()).toEqual([]);
    expect(final.status()).toBe(ExecutionStatus.Stopped);
    expect(final.stopReason()).toBe(StopReason.RetryLimitReached);
    expect(final.stopSignal()?.source).toBe('self-critic');
    expect(final.stepCount()).toBe(3);
  });

  it('RetryLimitReached after recorded errors (the error policy) still ends the run Failed', async () => {
    const { final } = await run({
      driver: scriptedDriver([{ toolCalls: [{ name: 'nope', args: {} }] }]),
      tools: { add },
    });
    expect(final.errors().length).toBeGreaterThan(0);
    expect(final.status()).toBe(ExecutionStatus.Failed);
    expect(final.stopReason()).toBe(StopReason.RetryLimitReached);
  });

  it('Completed and FinishReasonReceived still end Completed', async () => {
    const finish: Hook = {
      afterStep: (state) => state.withStopSignal(StopSignal.of(StopReason.FinishReasonReceived, 'length')),
    };
    const { final } = await run({
      driver: scriptedDriver([{ toolCalls: [addCall()] }]),
      tools: { add },
      hooks: [finish],
    });
    expect(final.status()).toBe(ExecutionStatus.Completed);
    expect(final.stopReason()).toBe(StopReason.FinishReasonReceived);
  });
});

describe('a step whose model call failed still closes its cycle', () => {
  it('runs afterStep hooks for it and emits step.finished once; then the run fails', async () => {
    const seen: string[] = [];
    const hooks: Hook[] = [
      {
        afterStep: (state) => {
          seen.push(`afterStep with ${state.currentStep()?.errors()[0]?.message}`);
          return undefined;
        },
        onError: (_state, { error }) => {
          seen.push(`onError ${error.message}`);
          return undefined;
        },
      },
    ];
    const { final, events, types } = await run({ driver: modelDown, hooks });
    expect(final.status()).toBe(ExecutionStatus.Failed);
    expect(final.stopReason()).toBe(StopReason.ErrorForbade);
    expect(final.stepCount()).toBe(1);
    expect(final.errors().map((e) => e.message)).toEqual(['model unavailable']);
    expect(seen).toEqual(['afterStep with model unavailable', 'onError model unavailable']);
    expect(types.filter((t) => t === 'step.finished')).toHaveLength(1);
    const finished = events.find((e) => e.type === 'step.finished');
    expect(finished).toMatchObject({ stepNumber: 1, stepType: 'error' });
    expect(types.slice(types.indexOf('step.started'))).toEqual([
      'step.started',
      'step.finished',
      'continuation.evaluated',
      'error',
      'execution.finished',
    ]);
  });

  it('does the same without hooks; with a store, the failed step is checkpointed', async () => {
    const store = new InMemorySessionStore();
    const events: AgentEvent[] = [];
    const final = await createAgent({ driver: modelDown, store }).execute(question(), {
      sessionId: 'down',
      onEvent: (e) => events.push(e),
    });
    expect(final.stepCount()).toBe(1);
    expect(events.filter((e) => e.type === 'step.finished')).toHaveLength(1);
    expect(final.status()).toBe(ExecutionStatus.Failed);
    const saved = await store.load('down');
    expect(saved?.state.stepCount()).toBe(1);
    expect(saved?.state.status()).toBe(ExecutionStatus.Failed);
  });
});

describe('AgentStopError from any hook is a stop, not a failure', () => {
  it('from afterExecution: Stopped with StopRequested, the hook message and source', async () => {
    const { final } = await run({
      driver: scriptedDriver([{ text: '5' }]),
      hooks: [
        {
          afterExecution: () => {
            throw new AgentStopError('audit refused the answer', { rule: 7 }, 'audit');
          },
        },
      ],
    });
    expect(final.status()).toBe(ExecutionStatus.Stopped);
    expect(final.stopReason()).toBe(StopReason.StopRequested);
    expect(final.stopSignal()).toMatchObject({ message: 'audit refused the answer', source: 'audit' });
    expect(final.errors()).toEqual([]);
  });

  it('from onError: the stop is recorded as a signal, no second error, the run still Failed by its error', async () => {
    const { final } = await run({
      driver: modelDown,
      hooks: [
        {
          onError: () => {
            throw new AgentStopError('on-call paged, stop here', {}, 'pager');
          },
        },
      ],
    });
    expect(final.errors().map((e) => e.message)).toEqual(['model unavailable']);
    expect(final.status()).toBe(ExecutionStatus.Failed);
    expect(final.stopReason()).toBe(StopReason.ErrorForbade);
    const signals = final.execution()?.continuation().stopSignals ?? [];
    expect(signals.map((s) => [s.reason, s.source])).toContainEqual([StopReason.StopRequested, 'pager']);
  });
});

describe('the failure path evaluates the continuation', () => {
  it('a beforeStep hook that throws: continuation.evaluated with shouldStop, the final reason and the step number', async () => {
    const { final, events } = await run({
      driver: scriptedDriver([{ text: '5' }]),
      hooks: [
        {
          beforeStep: () => {
            throw new Error('guard crashed');
          },
        },
      ],
    });
    expect(final.status()).toBe(ExecutionStatus.Failed);
    const evaluated = events.filter((e) => e.type === 'continuation.evaluated');
    expect(evaluated).toHaveLength(1);
    expect(evaluated[0]).toMatchObject({
      shouldStop: true,
      stopReason: StopReason.ErrorForbade,
      stepNumber: 0,
    });
  });

  it('a failed model call: one evaluation, at the step it failed in', async () => {
    const { events } = await run({ driver: modelDown });
    const evaluated = events.filter((e) => e.type === 'continuation.evaluated');
    expect(evaluated).toEqual([
      expect.objectContaining({ shouldStop: true, stopReason: StopReason.ErrorForbade, stepNumber: 1 }),
    ]);
  });

  it('an afterExecution hook that throws fails the run, and says so in a last evaluation', async () => {
    const { final, events } = await run({
      driver: scriptedDriver([{ text: '5' }]),
      hooks: [
        {
          afterExecution: () => {
            throw new Error('report upload failed');
          },
        },
      ],
    });
    expect(final.status()).toBe(ExecutionStatus.Failed);
    const evaluated = events.filter((e) => e.type === 'continuation.evaluated');
    expect(evaluated.at(-1)).toMatchObject({
      shouldStop: true,
      stopReason: StopReason.ErrorForbade,
      stepNumber: 1,
    });
  });
});
