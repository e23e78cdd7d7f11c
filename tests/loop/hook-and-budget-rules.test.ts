/**
 * The loop's rules for budgets and hooks (issue #33), each named for the DESIGN line or seed it
 * follows: a budget is a hard limit, a hook that throws fails the run whichever hook it is, a
 * failing afterExecution hook goes through onError, and afterStep runs once for every recorded
 * step and for no other.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { Driver } from '../../src/drivers/driver';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { Hook } from '../../src/hooks/hook';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import type { SessionStore } from '../../src/persistence/session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { AgentStopError } from '../../src/state/agent-stop-error';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { ExecutionStatus } from '../../src/state/execution-status';
import type { AgentEvent } from '../../src/state/loop-events';
import { StopReason } from '../../src/state/stop-reason';
import { StopSignal } from '../../src/state/stop-signal';
import { defineTool } from '../../src/tools/define-tool';
import { add, addCall } from '../support/agents';

const question = () => AgentState.empty().withUserMessage('What is 2 + 3?');
/**
 * A model that asks for the add tool at every step: only a limit ends its run (a runaway fails at
 * 100 steps rather than hang the suite).
 */
const endless = (usage = {}) =>
  scriptedDriver([
    (state) =>
      state.stepCount() < 100
        ? { toolCalls: [addCall()], usage }
        : { error: new Error('ran away: 100 steps') },
  ]);
const continueAlways: Hook = { name: 'always-continue', beforeStep: (s) => s.withContinuationRequested() };

async function run(options: Parameters<typeof createAgent>[0], state = question()) {
  const events: AgentEvent[] = [];
  const final = await createAgent(options).execute(state, { onEvent: (e) => events.push(e) });
  return { final, events, types: events.map((e) => e.type) };
}

describe('a budget is a hard limit (DESIGN: "a run never starts a step it has no budget for ... Never unbounded by accident")', () => {
  afterEach(() => vi.useRealTimers());

  it('a beforeStep hook that asks to continue does not run past maxSteps', async () => {
    const { final } = await run({
      driver: endless(),
      tools: { add },
      hooks: [continueAlways],
      budget: new ExecutionBudget({ maxSteps: 2 }),
    });
    expect(final.stepCount()).toBe(2);
    expect(final.status()).toBe(ExecutionStatus.Stopped);
    expect(final.stopReason()).toBe(StopReason.StepsLimitReached);
  });

  it('nor past maxTokens, maxCost or a deadline', async () => {
    const tokens = await run({
      driver: endless({ inputTokens: 10 }),
      tools: { add },
      hooks: [continueAlways],
      budget: new ExecutionBudget({ maxTokens: 15 }),
    });
    expect([tokens.final.stepCount(), tokens.final.stopReason()]).toEqual([2, StopReason.TokenLimitReached]);
    const cost = await run({
      driver: endless({ cost: 0.3 }),
      tools: { add },
      hooks: [continueAlways],
      budget: new ExecutionBudget({ maxCost: 0.5 }),
    });
    expect(cost.final.stepCount()).toBe(2);
    expect(cost.final.stopSignal()?.context).toMatchObject({ limit: 'maxCost' });
    const deadline = await run({
      driver: endless(),
      tools: { add },
      hooks: [continueAlways],
      budget: new ExecutionBudget({ deadline: new Date(Date.now() - 1_000) }),
    });
    expect([deadline.final.stepCount(), deadline.final.stopReason()]).toEqual([
      0,
      StopReason.TimeLimitReached,
    ]);
  });

  it('nor past maxSeconds, even when the time runs out during the beforeStep hooks', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    // each beforeStep hook takes 40 s (of a fake clock): the second step's hooks end past 60 s
    const slowContinue: Hook = {
      beforeStep: (state) => {
        vi.setSystemTime(Date.now() + 40_000);
        return state.withContinuationRequested();
      },
    };
    const { final } = await run({
      driver: endless(),
      tools: { add },
      hooks: [slowContinue],
      budget: new ExecutionBudget({ maxSeconds: 60 }),
    });
    expect(final.stepCount()).toBe(1);
    expect(final.stopReason()).toBe(StopReason.TimeLimitReached);
  });

  it('a hook that always asks to continue, on an agent without a budget, stops at the default 20 steps', async () => {
    const { final } = await run({
      driver: endless(),
      tools: { add },
      hooks: [continueAlways, { afterStep: (s) => s.withContinuationRequested() }],
    });
    expect(final.stepCount()).toBe(ExecutionBudget.default().maxSteps);
    expect(final.stopReason()).toBe(StopReason.StepsLimitReached);
  });

  it('a continuation request still overrides any other stop signal (seed 000: shouldStop)', async () => {
    const critic: Hook = {
      afterStep: (state) =>
        state
          .withStopSignal(StopSignal.of(StopReason.StopRequested, 'critic says stop', {}, 'critic'))
          .withContinuationRequested(),
      beforeStep: (state) => state.withContinuationRequested(),
    };
    const { final } = await run({
      driver: scriptedDriver([
        (state) => (state.stepCount() < 100 ? { text: 'draft' } : { error: new Error('ran away') }),
      ]),
      hooks: [critic],
      budget: new ExecutionBudget({ maxSteps: 3 }),
    });
    // the critic's signal did not stop steps 2 and 3; the budget stopped step 4
    expect(final.stepCount()).toBe(3);
    expect(final.stopReason()).toBe(StopReason.StopRequested);
  });

  it.each([
    [
      'a hook of its own',
      (s: AgentState) => s.withStopSignal(StopSignal.of(StopReason.UserRequested, 'done', {}, 'critic')),
    ],
    ['StopSignal.userRequested()', (s: AgentState) => s.withStopSignal(StopSignal.userRequested('done'))],
  ])(
    "a hook's user_requested signal (%s) is overridden by its continuation request; the budget then stops the run (seed 000, #44 item 10)",
    async (_, signal) => {
      const hook: Hook = { afterStep: (s) => signal(s).withContinuationRequested() };
      const options = () => ({
        driver: scriptedDriver([{ text: 'draft' }, { error: new Error('a second model call') }]),
        hooks: [hook],
        budget: new ExecutionBudget({ maxSteps: 1 }),
      });
      // quiet (the shortcuts of a run no one listens to) and listened to: the same outcome
      const quiet = await createAgent(options()).execute(question());
      const { final: listened, types } = await run(options());
      for (const final of [quiet, listened]) {
        expect(final.stepCount()).toBe(1);
        expect(final.status()).toBe(ExecutionStatus.Stopped);
        expect(final.stopReason()).toBe(StopReason.StepsLimitReached);
        expect(
          final
            .execution()
            ?.continuation()
            .stopSignals.map((s) => s.reason),
        ).toEqual([StopReason.UserRequested, StopReason.StepsLimitReached]);
      }
      // the second step was started by its budget guard alone: no model call (the driver's second answer fails)
      expect(types.filter((t) => t === 'step.started')).toHaveLength(2);
      expect(listened.errors()).toEqual([]);
    },
  );
});

describe('a hook that throws fails the run, whichever hook it is (DESIGN: "a hook that throws, ends the run Failed with ErrorForbade")', () => {
  const stages = [
    'beforeExecution',
    'beforeStep',
    'beforeToolUse',
    'afterToolUse',
    'afterStep',
    'afterExecution',
  ] as const;
  for (const stage of stages) {
    it(`${stage}: Failed with error_forbade, the error recorded once, every call recorded once`, async () => {
      const hook: Hook = {
        name: 'audit',
        [stage]: () => {
          throw new Error('audit log unavailable');
        },
      };
      const { final } = await run({
        driver: scriptedDriver([{ toolCalls: [addCall(1, 1, 'a'), addCall(2, 2, 'b')] }, { text: 'done' }]),
        tools: { add },
        hooks: [hook],
      });
      expect(final.status()).toBe(ExecutionStatus.Failed);
      expect(final.stopReason()).toBe(StopReason.ErrorForbade);
      expect(final.errors().filter((e) => e.message === 'audit log unavailable')).toHaveLength(1);
      const calls = final.steps().flatMap((s) => s.toolExecutions().map((e) => e.toolCallId()));
      expect(new Set(calls).size).toBe(calls.length);
    });
  }

  it('afterToolUse: the calls that ran keep their results', async () => {
    const { final } = await run({
      driver: scriptedDriver([{ toolCalls: [addCall(1, 1, 'a'), addCall(2, 2, 'b')] }, { text: 'done' }]),
      tools: { add },
      hooks: [
        {
          afterToolUse: (_state, { toolExecution }) => {
            if (toolExecution.toolCallId() === 'b') throw new Error('audit log unavailable');
          },
        },
      ],
    });
    expect(final.stepCount()).toBe(1);
    expect(
      final
        .steps()[0]
        ?.toolExecutions()
        .map((e) => e.value()),
    ).toEqual([2, 4]);
    expect(final.errors().map((e) => e.message)).toEqual(['audit log unavailable']);
  });
});

describe('a failing afterExecution hook fails the run as every other failure does (README: onError hooks run)', () => {
  it('runs the onError hooks with its error and emits `error`', async () => {
    const seen: string[] = [];
    const { final, events, types } = await run({
      driver: scriptedDriver([{ text: '5' }]),
      hooks: [
        {
          afterExecution: () => {
            seen.push('afterExecution');
            throw new Error('report upload failed');
          },
          onError: (_state, { error }) => void seen.push(`onError ${error.message}`),
        },
      ],
    });
    expect(seen).toEqual(['afterExecution', 'onError report upload failed']);
    expect(final.status()).toBe(ExecutionStatus.Failed);
    expect(final.errors().map((e) => e.message)).toEqual(['report upload failed']);
    expect(events.find((e) => e.type === 'error')).toMatchObject({
      error: { message: 'report upload failed' },
    });
    expect(types.slice(-3)).toEqual(['continuation.evaluated', 'error', 'execution.finished']);
  });
});

/** An afterStep audit: which steps its hook saw (null: it ran with no step in flight). */
function audit() {
  const seen: (string | null)[] = [];
  const hook: Hook = {
    name: 'audit',
    afterStep: (state) => void seen.push(state.currentStep()?.id() ?? null),
  };
  const check = (final: AgentState) => expect(seen).toEqual(final.steps().map((s) => s.id()));
  return { hook, seen, check };
}

describe('afterStep and recorded steps are one to one (seed 003: every started step closes its cycle)', () => {
  it('a stop during tools: the step is recorded, and its afterStep hooks ran', async () => {
    const { hook, check } = audit();
    let started!: () => void;
    const toolStarted = new Promise<void>((resolve) => (started = resolve));
    const waits = defineTool({
      description: 'Runs until stopped',
      inputSchema: z.object({}),
      execute: (_input, { signal }) =>
        new Promise((_, reject) => {
          started();
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
        }),
    });
    const controller = new AbortController();
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [{ id: 'w', name: 'waits', args: {} }] }]),
      tools: { waits },
      hooks: [hook],
    });
    const running = agent.execute(question(), { signal: controller.signal });
    await toolStarted;
    controller.abort();
    const final = await running;
    expect(final.status()).toBe(ExecutionStatus.Stopped);
    expect(final.stopReason()).toBe(StopReason.UserRequested);
    expect(final.stepCount()).toBe(1);
    check(final);
  });

  it('a stop during tools is not overridden by an afterStep continuation request', async () => {
    const controller = new AbortController();
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [{ id: 'w', name: 'waits', args: {} }] }]),
      tools: {
        waits: defineTool({
          description: 'Asks to be stopped',
          inputSchema: z.object({}),
          execute: (_input, { signal }) =>
            new Promise((_, reject) => {
              signal.addEventListener('abort', () => reject(signal.reason), { once: true });
              controller.abort();
            }),
        }),
      },
      hooks: [{ afterStep: (s) => s.withContinuationRequested() }],
    });
    const final = await agent.execute(question(), { signal: controller.signal });
    expect(final.stepCount()).toBe(1);
    expect(final.stopReason()).toBe(StopReason.UserRequested);
  });

  it('an AgentStopError from the driver: no step recorded, no afterStep', async () => {
    const { hook, seen, check } = audit();
    const stops: Driver = {
      name: 'stops',
      infer: () => {
        throw new AgentStopError('nothing to do', {}, 'driver');
      },
    };
    const { final } = await run({ driver: stops, hooks: [hook] });
    expect(final.status()).toBe(ExecutionStatus.Stopped);
    expect(final.stopReason()).toBe(StopReason.StopRequested);
    expect(final.stepCount()).toBe(0);
    expect(seen).toEqual([]);
    check(final);
  });

  it('a failed approval checkpoint: the error step is recorded, and its afterStep hooks ran', async () => {
    const { hook, check } = audit();
    const memory = new InMemorySessionStore();
    const store: SessionStore = {
      load: (id) => memory.load(id),
      // the run's first save succeeds; the one of the step waiting for approval fails
      save: async (id, state, version) => {
        if (state.approval() !== null) throw new Error('disk full');
        return memory.save(id, state, version);
      },
      delete: (id) => memory.delete(id),
      list: () => memory.list(),
      close: () => memory.close(),
    };
    const gate = defineTool({
      description: 'Needs a person',
      inputSchema: z.object({}),
      needsApproval: true,
      execute: async () => 'opened',
    });
    const final = await createAgent({
      driver: scriptedDriver([{ toolCalls: [{ id: 'g', name: 'gate', args: {} }] }]),
      tools: { gate },
      hooks: [hook],
      store,
    }).execute(question(), { sessionId: 'approval-save-fails' });
    expect(final.status()).toBe(ExecutionStatus.Failed);
    expect(final.stepCount()).toBe(1);
    expect(final.lastStepType()).toBe('error');
    expect(final.errors().filter((e) => e.message === 'disk full')).toHaveLength(1);
    check(final);
  });
});
