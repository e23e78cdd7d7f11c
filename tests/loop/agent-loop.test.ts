import { getEventListeners } from 'node:events';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createActor, type InspectionEvent } from 'xstate';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { Hook } from '../../src/hooks/hook';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import { InvalidDefinitionError } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { AgentStepType } from '../../src/state/agent-step-type';
import { AgentStopError } from '../../src/state/agent-stop-error';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { ExecutionStatus } from '../../src/state/execution-status';
import { StopReason } from '../../src/state/stop-reason';
import { StopSignal } from '../../src/state/stop-signal';
import { defineTool } from '../../src/tools/define-tool';
import { add, addCall, failing, inState, recordEvents, waitForState } from '../support/agents';

const question = () =>
  AgentState.empty().withSystemPrompt('You add numbers.').withUserMessage('What is 2 + 3?');
const toolThenAnswer = () => scriptedDriver([{ toolCalls: [addCall()] }, { text: '5' }]);
const forever = () =>
  scriptedDriver([{ toolCalls: [addCall()], usage: { inputTokens: 100, outputTokens: 50 } }]);

afterEach(() => {
  vi.useRealTimers();
});

describe('the agent loop', () => {
  it('completes naturally after a final response', async () => {
    const agent = createAgent({ driver: toolThenAnswer(), tools: { add } });
    const state = await agent.execute(question());
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.stopReason()).toBe(StopReason.Completed);
    expect(state.stepCount()).toBe(2);
    expect(state.lastStepType()).toBe(AgentStepType.FinalResponse);
    expect(state.finalResponse()).toBe('5');
    expect(state.steps()[0]?.toolExecutions()[0]?.value()).toBe(5);
    expect(state.executionCount()).toBe(1);
    expect(state.execution()?.completedAt()).toBeInstanceOf(Date);
    expect(state.messages().map((m) => [m.role, m.content])).toEqual([
      ['user', 'What is 2 + 3?'],
      ['assistant', ''],
      ['tool', '5'],
      ['assistant', '5'],
    ]);
  });

  it('stops with StepsLimitReached after exactly maxSteps steps', async () => {
    const agent = createAgent({
      driver: forever(),
      tools: { add },
      budget: new ExecutionBudget({ maxSteps: 3 }),
    });
    const state = await agent.execute(question());
    expect(state.status()).toBe(ExecutionStatus.Stopped);
    expect(state.stopReason()).toBe(StopReason.StepsLimitReached);
    expect(state.stepCount()).toBe(3);
    expect(state.stopSignal()?.message).toBe('Step limit reached: 3/3');
    expect(state.stopSignal()?.context).toEqual({ limit: 'maxSteps', currentSteps: 3, maxSteps: 3 });
    expect(state.stopSignal()?.reason && state.stopSignal()?.source).toBe('budgetGuard');
  });

  it('runs on the default budget of 20 steps when none is given', async () => {
    const state = await createAgent({ driver: forever(), tools: { add } }).execute(question());
    expect(state.stopReason()).toBe(StopReason.StepsLimitReached);
    expect(state.stepCount()).toBe(20);
  });

  it('stops with TokenLimitReached once maxTokens is used', async () => {
    const agent = createAgent({
      driver: forever(),
      tools: { add },
      budget: new ExecutionBudget({ maxTokens: 400 }),
    });
    const state = await agent.execute(question());
    expect(state.stopReason()).toBe(StopReason.TokenLimitReached);
    expect(state.stepCount()).toBe(3); // 150 tokens a step: 150, 300, 450 >= 400
    expect(state.usage().totalTokens).toBe(450);
    expect(state.stopSignal()?.context).toMatchObject({
      limit: 'maxTokens',
      totalTokens: 450,
      maxTotalTokens: 400,
    });
  });

  it('stops once maxCost is spent', async () => {
    const driver = scriptedDriver([{ toolCalls: [addCall()], usage: { inputTokens: 1, cost: 0.2 } }]);
    const agent = createAgent({ driver, tools: { add }, budget: new ExecutionBudget({ maxCost: 0.5 }) });
    const state = await agent.execute(question());
    expect(state.status()).toBe(ExecutionStatus.Stopped);
    expect(state.stopReason()).toBe(StopReason.TokenLimitReached);
    expect(state.stopSignal()?.context).toMatchObject({ limit: 'maxCost', maxCost: 0.5 });
    expect(state.stepCount()).toBe(3);
    expect(state.usage().cost).toBeCloseTo(0.6);
  });

  it('stops with TimeLimitReached after maxSeconds (fake clock)', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const driver = scriptedDriver([
      () => {
        vi.setSystemTime(Date.now() + 25_000);
        return { toolCalls: [addCall()] };
      },
    ]);
    const agent = createAgent({ driver, tools: { add }, budget: new ExecutionBudget({ maxSeconds: 60 }) });
    const state = await agent.execute(question());
    expect(state.stopReason()).toBe(StopReason.TimeLimitReached);
    expect(state.stepCount()).toBe(3); // 25 s, 50 s, 75 s >= 60 s
    expect(state.stopSignal()?.context).toMatchObject({
      limit: 'maxSeconds',
      elapsedSeconds: 75,
      maxSeconds: 60,
    });
  });

  it('stops with TimeLimitReached at the deadline (fake clock)', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-03-01T12:00:00Z') });
    const driver = scriptedDriver([
      () => {
        vi.setSystemTime(Date.now() + 60_000);
        return { toolCalls: [addCall()] };
      },
    ]);
    const budget = new ExecutionBudget({ deadline: '2026-03-01T12:02:30Z' });
    const state = await createAgent({ driver, tools: { add }, budget }).execute(question());
    expect(state.stopReason()).toBe(StopReason.TimeLimitReached);
    expect(state.stepCount()).toBe(3);
    expect(state.stopSignal()?.context).toMatchObject({ limit: 'deadline' });
  });

  it('never starts a step with an exhausted budget', async () => {
    const agent = createAgent({
      driver: forever(),
      tools: { add },
      budget: new ExecutionBudget({ maxSteps: 0 }),
    });
    const state = await agent.execute(question());
    expect(state.stepCount()).toBe(0);
    expect(state.stopReason()).toBe(StopReason.StepsLimitReached);
  });

  it('lets a hook request continuation over a stop signal, for one step; never over a budget', async () => {
    let overrides = 0;
    const keepGoing: Hook = {
      name: 'keepGoing',
      // the signal is raised (and overridden) after the first step; beforeStep overrides it twice more
      afterStep: (state) =>
        state.stepCount() === 0
          ? state
              .withStopSignal(StopSignal.of(StopReason.StopRequested, 'enough', {}, 'critic'))
              .withContinuationRequested()
          : undefined,
      beforeStep: (state) => {
        if (state.stopSignal() && overrides < 2) {
          overrides++;
          return state.withContinuationRequested();
        }
        return undefined;
      },
    };
    const agent = (maxSteps: number) =>
      createAgent({
        driver: forever(),
        tools: { add },
        budget: new ExecutionBudget({ maxSteps }),
        hooks: [keepGoing],
      });
    const state = await agent(10).execute(question());
    expect(state.stepCount()).toBe(3);
    expect(state.stopReason()).toBe(StopReason.StopRequested);
    expect(state.status()).toBe(ExecutionStatus.Stopped);
    overrides = 0;
    const capped = await agent(2).execute(question());
    expect(capped.stepCount()).toBe(2);
    expect(capped.status()).toBe(ExecutionStatus.Stopped);
  });

  it('lets a beforeToolUse hook block a call: recorded as blocked, the model told', async () => {
    const guard: Hook = {
      name: 'noAdding',
      beforeToolUse: (_state, { toolCall }) =>
        toolCall.name === 'add' ? { block: 'adding is not allowed' } : undefined,
    };
    const execute = vi.fn(add.execute);
    const agent = createAgent({
      driver: toolThenAnswer(),
      tools: { add: { ...add, execute } },
      hooks: [guard],
    });
    const state = await agent.execute(question());
    const blocked = state.steps()[0]?.toolExecutions()[0];
    expect(blocked?.wasBlocked()).toBe(true);
    expect(blocked?.error()?.name).toBe('ToolExecutionBlocked');
    expect(blocked?.error()?.message).toBe('adding is not allowed');
    expect(execute).not.toHaveBeenCalled();
    expect(state.steps()[0]?.stepType()).toBe(AgentStepType.Error);
    expect(state.messages()[2]).toMatchObject({
      role: 'tool',
      content: 'Error: adding is not allowed',
      isError: true,
    });
    expect(state.status()).toBe(ExecutionStatus.Completed);
  });

  it('lets a beforeToolUse hook rewrite arguments and afterToolUse see the result', async () => {
    const seen: unknown[] = [];
    const hooks: Hook[] = [
      { beforeToolUse: () => ({ args: { a: 10, b: 20 } }) },
      { afterToolUse: (_s, { toolExecution }) => void seen.push(toolExecution.value()) },
    ];
    const state = await createAgent({ driver: toolThenAnswer(), tools: { add }, hooks }).execute(question());
    expect(seen).toEqual([30]);
    expect(state.steps()[0]?.toolExecutions()[0]?.args()).toEqual({ a: 10, b: 20 });
  });

  it('fails with ErrorForbade when the driver throws, the error recorded on the step', async () => {
    const driver = scriptedDriver([
      { toolCalls: [addCall()] },
      { error: new TypeError('model unreachable') },
    ]);
    const state = await createAgent({ driver, tools: { add } }).execute(question());
    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.stopReason()).toBe(StopReason.ErrorForbade);
    expect(state.stepCount()).toBe(2);
    expect(state.lastStepType()).toBe(AgentStepType.Error);
    expect(state.lastStep()?.errors()).toEqual([
      { name: 'TypeError', message: 'model unreachable', code: null, details: null },
    ]);
    expect(state.steps()[0]?.toolExecutions()[0]?.value()).toBe(5);
  });

  it('fails with RetryLimitReached after three consecutive error steps', async () => {
    const driver = scriptedDriver([{ toolCalls: [{ name: 'failing', args: {} }] }]);
    const state = await createAgent({ driver, tools: { failing } }).execute(question());
    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.stopReason()).toBe(StopReason.RetryLimitReached);
    expect(state.stepCount()).toBe(3);
    expect(state.errors().map((e) => e.message)).toEqual(['tool exploded', 'tool exploded', 'tool exploded']);
  });

  it('honours a custom error policy', async () => {
    const driver = scriptedDriver([{ toolCalls: [{ name: 'failing', args: {} }] }]);
    const agent = createAgent({ driver, tools: { failing }, errorPolicy: { maxConsecutiveErrorSteps: 1 } });
    const state = await agent.execute(question());
    expect(state.stopReason()).toBe(StopReason.RetryLimitReached);
    expect(state.stepCount()).toBe(1);
  });

  it('completes when the model recovers from a tool error', async () => {
    const driver = scriptedDriver([
      { toolCalls: [{ name: 'failing', args: {} }] },
      { toolCalls: [{ name: 'failing', args: {} }] },
      { toolCalls: [addCall()] },
      { text: '5' },
    ]);
    const state = await createAgent({ driver, tools: { add, failing } }).execute(question());
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.stopReason()).toBe(StopReason.Completed);
    expect(state.steps().map((s) => s.stepType())).toEqual([
      'error',
      'error',
      'tool_execution',
      'final_response',
    ]);
    expect(state.messages()[2]).toMatchObject({
      role: 'tool',
      content: 'Error: tool exploded',
      isError: true,
    });
    expect(state.hasErrors()).toBe(true);
  });

  it('fails with ErrorForbade when a hook throws, and runs onError hooks', async () => {
    const onError = vi.fn();
    const hooks: Hook[] = [
      {
        afterStep: () => {
          throw new RangeError('hook broke');
        },
      },
      { onError: (state, { error }) => void onError(state.status(), error.message) },
    ];
    const state = await createAgent({ driver: toolThenAnswer(), tools: { add }, hooks }).execute(question());
    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.stopReason()).toBe(StopReason.ErrorForbade);
    expect(state.errors().map((e) => `${e.name}: ${e.message}`)).toEqual(['RangeError: hook broke']);
    expect(state.stepCount()).toBe(1);
    expect(onError).toHaveBeenCalledWith('failed', 'hook broke');
  });

  it('fails with ErrorForbade when a beforeExecution hook throws, before any model call', async () => {
    const infer = vi.fn();
    const hooks: Hook[] = [
      {
        beforeExecution: () => {
          throw new Error('no session');
        },
      },
    ];
    const driver = { name: 'spy', infer };
    const state = await createAgent({ driver, hooks }).execute(question());
    expect(infer).not.toHaveBeenCalled();
    expect(state.status()).toBe(ExecutionStatus.Failed);
    expect(state.errors()[0]?.message).toBe('no session');
  });

  it('stops with StopRequested when a tool throws AgentStopError', async () => {
    const halt = defineTool({
      description: 'halt',
      inputSchema: z.object({}),
      execute: () => {
        throw new AgentStopError('enough', { why: 'test' }, 'halt');
      },
    });
    const driver = scriptedDriver([
      { toolCalls: [{ name: 'halt', args: {} }, addCall()] },
      { text: 'never' },
    ]);
    const state = await createAgent({ driver, tools: { halt, add } }).execute(question());
    expect(state.status()).toBe(ExecutionStatus.Stopped);
    expect(state.stopReason()).toBe(StopReason.StopRequested);
    expect(state.stopSignal()).toEqual(
      StopSignal.of(StopReason.StopRequested, 'enough', { why: 'test' }, 'halt'),
    );
    expect(state.stepCount()).toBe(1);
    expect(
      state
        .steps()[0]
        ?.toolExecutions()
        .map((e) => e.name()),
    ).toEqual(['halt', 'add']);
    expect(state.steps()[0]?.toolExecutions()[1]?.value()).toBe(5);
  });

  it('stops with StopRequested when a hook throws AgentStopError', async () => {
    const hooks: Hook[] = [
      {
        beforeStep: (state) => {
          if (state.stepCount() === 1) throw new AgentStopError('one is enough');
        },
      },
    ];
    const state = await createAgent({ driver: forever(), tools: { add }, hooks }).execute(question());
    expect(state.status()).toBe(ExecutionStatus.Stopped);
    expect(state.stopReason()).toBe(StopReason.StopRequested);
    expect(state.stepCount()).toBe(1);
  });

  it('stops with FinishReasonReceived on a listed finish reason: a natural end', async () => {
    const driver = scriptedDriver([{ toolCalls: [addCall()], finishReason: 'length' }]);
    const state = await createAgent({ driver, tools: { add }, finishReasons: ['length'] }).execute(
      question(),
    );
    expect(state.stopReason()).toBe(StopReason.FinishReasonReceived);
    expect(state.status()).toBe(ExecutionStatus.Completed);
    expect(state.stepCount()).toBe(1);
  });

  it('stops promptly on a stop event mid-inference, keeping completed steps', async () => {
    let aborted: unknown;
    const driver = {
      name: 'slow-second',
      infer: scriptedDriver([{ toolCalls: [addCall()] }]).infer,
    };
    const slow = scriptedDriver([{ toolCalls: [addCall()] }, { text: 'late', delayMs: 10_000 }]);
    driver.infer = (state, ctx) => {
      ctx.signal.addEventListener('abort', () => {
        aborted = ctx.signal.reason;
      });
      return slow.infer(state, ctx);
    };
    const agent = createAgent({ driver, tools: { add } });
    const actor = agent.createActor(question());
    actor.start();
    actor.send({ type: 'execute' });
    await waitForState(actor, (s) => inState('inference')(s) && s.context.state.stepCount() === 1);
    actor.send({ type: 'stop' });
    // no afterExecution hooks: the stop is handled within the same event
    expect(actor.getSnapshot().value).toBe('stopped');
    const state = actor.getSnapshot().context.state;
    expect(state.status()).toBe(ExecutionStatus.Stopped);
    expect(state.stopReason()).toBe(StopReason.UserRequested);
    expect(state.stepCount()).toBe(1);
    expect(aborted).toBeDefined();
    actor.stop();
  });

  it('runs afterExecution hooks after a stop; a second stop during them ends the run at once', async () => {
    let release: () => void = () => {};
    const seen: string[] = [];
    const hooks: Hook[] = [
      {
        afterExecution: (state) => {
          seen.push(state.stopReason() ?? 'none');
          return new Promise<undefined>((resolve) => {
            release = () => resolve(undefined);
          });
        },
      },
    ];
    const driver = scriptedDriver([{ toolCalls: [addCall()] }, { text: 'late', delayMs: 10_000 }]);
    const actor = createAgent({ driver, tools: { add }, hooks }).createActor(question());
    actor.start();
    actor.send({ type: 'execute' });
    await waitForState(actor, (s) => inState('inference')(s) && s.context.state.stepCount() === 1);
    actor.send({ type: 'stop' });
    expect(actor.getSnapshot().value).toEqual({ inProgress: { afterExecution: 'runHooks' } });
    expect(seen).toEqual(['user_requested']);
    actor.send({ type: 'stop' });
    expect(actor.getSnapshot().value).toBe('stopped');
    release();
    expect(actor.getSnapshot().context.state.stopReason()).toBe(StopReason.UserRequested);
    actor.stop();
  });

  it('stops promptly on a stop mid-tool: the tool sees its signal aborted, the call is recorded once', async () => {
    let toolSignal: AbortSignal | undefined;
    const slowTool = defineTool({
      description: 'slow',
      inputSchema: z.object({}),
      execute: (_input, { signal }) =>
        new Promise((_resolve, reject) => {
          toolSignal = signal;
          signal.addEventListener('abort', () => reject(signal.reason));
        }),
    });
    const driver = scriptedDriver([{ toolCalls: [{ name: 'slow', args: {}, id: 's1' }] }]);
    const agent = createAgent({ driver, tools: { slow: slowTool } });
    const controller = new AbortController();
    const run = agent.execute(question(), { signal: controller.signal });
    await vi.waitUntil(() => toolSignal !== undefined);
    controller.abort();
    const state = await run;
    expect(toolSignal?.aborted).toBe(true);
    expect(state.status()).toBe(ExecutionStatus.Stopped);
    expect(state.stopReason()).toBe(StopReason.UserRequested);
    expect(state.stepCount()).toBe(1);
    const executions = state.steps()[0]?.toolExecutions() ?? [];
    expect(executions.map((e) => [e.toolCallId(), e.error()?.name])).toEqual([['s1', 'AbortError']]);
  });

  it('records each step after the step check its input gives (the runtime passes its after-step guards so)', async () => {
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [addCall()] }, { text: '5' }]),
      tools: { add },
    });
    const checked: number[] = [];
    const input = {
      ...agent.inputFor(question()),
      checkStep: (state: AgentState) => {
        checked.push(state.stepCount());
        return state.withStopSignal(
          StopSignal.of(StopReason.FinishReasonReceived, 'checked', {}, 'test-check'),
        );
      },
    };
    const actor = createActor(agent.machine, { input }).start();
    actor.send({ type: 'execute' });
    await waitForState(actor, (s) => s.value === 'stopped' || s.value === 'completed');
    const state = actor.getSnapshot().context.state;
    // the check ran once, on the step in flight, before it was recorded; its signal ended the run
    expect(checked).toEqual([0]);
    expect(state.stepCount()).toBe(1);
    expect(state.stopReason()).toBe(StopReason.FinishReasonReceived);
    expect(typeof agent.inputFor(question()).checkStep).toBe('function');
    actor.stop();
  });

  it('takes reports in inputFor: by default the run reports its tool calls, with reports false it reports none', async () => {
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [addCall()] }, { text: '5' }]),
      tools: { add },
    });
    const toolReports = async (input: ReturnType<typeof agent.inputFor>) => {
      const actor = createActor(agent.machine, { input });
      const seen: string[] = [];
      actor.on('*', (event) => seen.push(event.type));
      actor.start();
      actor.send({ type: 'execute' });
      await waitForState(actor, (s) => s.value === 'completed');
      actor.stop();
      return seen.filter((type) => type.startsWith('tool.'));
    };
    expect(agent.inputFor(question()).reports).toBe(true);
    expect(await toolReports(agent.inputFor(question()))).toEqual(['tool.started', 'tool.finished']);
    expect(await toolReports(agent.inputFor(question(), undefined, undefined, false))).toEqual([]);
  });

  it('starts the tool executor at the first tool call of an execution, once, and stops it with the cycle', async () => {
    const agent = createAgent({
      driver: scriptedDriver([
        { text: 'no tools' },
        { toolCalls: [addCall()] },
        { toolCalls: [addCall()] },
        { text: '5' },
      ]),
      tools: { add },
    });
    const actor = agent.createActor(question());
    const created: string[] = [];
    actor.system.inspect((e) => {
      if (e.type === '@xstate.actor') created.push((e.actorRef as unknown as { id: string }).id);
    });
    actor.start();
    // an answer without tool calls: the execution never makes a tool executor
    actor.send({ type: 'execute' });
    await waitForState(actor, (s) => s.value === 'completed');
    expect(created).toEqual(['driver']);
    expect(actor.getSnapshot().children.toolExecutor).toBeUndefined();
    // the next execution calls tools twice: one executor, stopped when the execution ends
    actor.send({ type: 'user.message', text: 'now add' });
    await waitForState(actor, (s) => s.value === 'completed' && s.context.state.executionCount() === 2);
    expect(created).toEqual(['driver', 'driver', 'toolExecutor']);
    expect(actor.getSnapshot().children.toolExecutor).toBeUndefined();
    expect(actor.getSnapshot().context.state.finalResponse()).toBe('5');
    actor.stop();
  });

  it('saves every checkpoint of an execution through one `checkpoint` worker, made once per execution', async () => {
    const store = new InMemorySessionStore();
    const agent = createAgent({
      store,
      driver: scriptedDriver([{ toolCalls: [addCall()] }, { toolCalls: [addCall()] }, { text: '5' }]),
      tools: { add },
    });
    const created: string[] = [];
    const answers: string[] = [];
    const inspect = (e: InspectionEvent) => {
      if (e.type === '@xstate.actor') created.push((e.actorRef as unknown as { id: string }).id);
      if (e.type === '@xstate.event' && /checkpoint/.test(e.event.type)) answers.push(e.event.type);
    };
    const done = await agent.execute(question(), { sessionId: 'chat', inspect });
    expect(done.stepCount()).toBe(3);
    // a save after each step and the outcome's: one worker, a `work` request and an answer each
    expect(answers).toEqual(Array.from({ length: 4 }, () => 'checkpoint.done'));
    expect(created.filter((id) => id === 'checkpoint')).toEqual(['checkpoint']);
    // (the first checkpoint is the run's start, which `execute` saves before the actor runs)
    expect((await store.checkpoints('chat')).map((c) => c.version)).toEqual([1, 2, 3, 4, 5]);
    // a run without a session makes none
    created.length = 0;
    await agent.execute(question(), { inspect });
    expect(created).not.toContain('checkpoint');
  });

  it('runs every step on two workers made once per execution; each call has a signal of its own', async () => {
    const signals: AbortSignal[] = [];
    const toolSignals: AbortSignal[] = [];
    const driver = scriptedDriver([{ toolCalls: [addCall()] }, { toolCalls: [addCall()] }, { text: '5' }]);
    const watchedAdd = defineTool({
      description: 'add',
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      // a listener never removed: it must go with its step's signal, not pile up on the execution's
      execute: ({ a, b }, { signal }) => {
        toolSignals.push(signal);
        signal.addEventListener('abort', () => {});
        return a + b;
      },
    });
    const agent = createAgent({
      driver: {
        name: 'watching',
        infer: (state, ctx) => {
          signals.push(ctx.signal);
          return driver.infer(state, ctx);
        },
      },
      tools: { add: watchedAdd },
    });
    const created: string[] = [];
    const state = await agent.execute(question(), {
      inspect: (e) => {
        if (e.type === '@xstate.actor') created.push((e.actorRef as unknown as { id: string }).id);
      },
    });
    expect(state.stepCount()).toBe(3);
    expect(created.filter((id) => id === 'driver' || id === 'toolExecutor')).toEqual([
      'driver',
      'toolExecutor',
    ]);
    // a signal per model call and per tool step (listeners a call leaves go with it), none aborted
    // by the run's normal end
    expect(new Set(signals).size).toBe(3);
    expect(new Set(toolSignals).size).toBe(2);
    expect(toolSignals.map((s) => getEventListeners(s, 'abort').length)).toEqual([1, 1]);
    expect([...signals, ...toolSignals].some((s) => s.aborted)).toBe(false);
  });

  it('a stop and a new message before a synchronous hook answer: the next execution does not take that answer', async () => {
    const agent = createAgent({
      driver: scriptedDriver([{ text: 'ok' }]),
      hooks: [{ beforeStep: (state) => state.withMetadata('beforeStepOf', state.executionId()) }],
    });
    const actor = agent.createActor(AgentState.empty().withUserMessage('first question'));
    const finished: string[] = [];
    actor.on('execution.finished', (e) => finished.push(e.status));
    let once = false;
    actor.on('step.started', () => {
      if (once) return;
      once = true;
      actor.send({ type: 'stop' });
      actor.send({ type: 'user.message', text: 'second question' });
    });
    actor.start();
    actor.send({ type: 'execute' });
    await waitForState(actor, (s) => s.value === 'completed');
    const state = actor.getSnapshot().context.state;
    expect(finished).toEqual(['stopped', 'completed']);
    expect(state.executionCount()).toBe(2);
    expect(state.metadata().beforeStepOf).toBe(state.executionId());
    expect(
      state
        .messages()
        .filter((m) => m.role === 'user')
        .map((m) => m.content),
    ).toEqual(['first question', 'second question']);
    actor.stop();
  });

  it('a tool that reads its signal only after the stop finds it aborted', async () => {
    let release: (() => void) | undefined;
    let late: AbortSignal | undefined;
    const lateReader = defineTool({
      description: 'reads its signal late',
      inputSchema: z.object({}),
      execute: async (_input, options) => {
        await new Promise<void>((resolve) => {
          release = resolve;
        });
        late = options.signal;
        return 'done';
      },
    });
    const controller = new AbortController();
    let started = false;
    const run = createAgent({
      driver: scriptedDriver([{ toolCalls: [{ name: 'lateReader', args: {} }] }]),
      tools: { lateReader },
    }).execute(question(), {
      signal: controller.signal,
      onEvent: (e) => {
        if (e.type === 'tool.started') started = true;
      },
    });
    await vi.waitUntil(() => started && release !== undefined);
    controller.abort();
    release?.();
    expect((await run).status()).toBe(ExecutionStatus.Stopped);
    await vi.waitUntil(() => late !== undefined);
    expect(late?.aborted).toBe(true);
  });

  it('a stop aborts the call in flight, not what an earlier call left running on its signal', async () => {
    const jobs: AbortSignal[] = [];
    const startJob = defineTool({
      description: 'starts a background job and returns at once',
      inputSchema: z.object({}),
      execute: (_input, { signal }) => {
        jobs.push(AbortSignal.any([signal, AbortSignal.timeout(60_000)]));
        return 'started';
      },
    });
    let slowSignal: AbortSignal | undefined;
    const slow = defineTool({
      description: 'waits until aborted',
      inputSchema: z.object({}),
      execute: (_input, { signal }) => {
        slowSignal = signal;
        return new Promise((_resolve, reject) =>
          signal.addEventListener('abort', () => reject(signal.reason)),
        );
      },
    });
    const controller = new AbortController();
    const run = createAgent({
      driver: scriptedDriver([
        { toolCalls: [{ name: 'startJob', args: {} }] },
        { toolCalls: [{ name: 'slow', args: {} }] },
      ]),
      tools: { startJob, slow },
    }).execute(question(), { signal: controller.signal });
    await vi.waitUntil(() => slowSignal !== undefined);
    controller.abort();
    expect((await run).status()).toBe(ExecutionStatus.Stopped);
    expect(slowSignal?.aborted).toBe(true);
    expect(jobs[0]?.aborted).toBe(false);
  });

  it('a stop that comes before a synchronous hook answer ends the run as stopped, the late answer dropped', async () => {
    const controller = new AbortController();
    const hooks: Hook[] = [
      {
        beforeStep: (state) => state.withMetadata('last', 'beforeStep'),
        afterExecution: (state) => state.withMetadata('last', 'afterExecution'),
      },
    ];
    const agent = createAgent({ driver: scriptedDriver([{ text: 'hi' }]), hooks });
    const state = await agent.execute(question(), {
      signal: controller.signal,
      // the stop is queued while the step starts, before the beforeStep answer
      onEvent: (e) => {
        if (e.type === 'step.started') controller.abort('user cancelled');
      },
    });
    expect(state.status()).toBe(ExecutionStatus.Stopped);
    expect(state.stopReason()).toBe(StopReason.UserRequested);
    expect(state.metadata().last).toBe('afterExecution');
  });

  it('a stopped execution aborts its call in flight; the next execution of the actor gets fresh workers', async () => {
    const signals: AbortSignal[] = [];
    const slow = scriptedDriver([{ text: 'late', delayMs: 10_000 }]);
    const fast = scriptedDriver([{ text: 'second answer' }]);
    const agent = createAgent({
      driver: {
        name: 'watching',
        infer: (state, ctx) => {
          signals.push(ctx.signal);
          return (signals.length === 1 ? slow : fast).infer(state, ctx);
        },
      },
    });
    const actor = agent.createActor(AgentState.empty());
    actor.start();
    actor.send({ type: 'user.message', text: 'first' });
    await vi.waitUntil(() => signals.length === 1);
    actor.send({ type: 'stop' });
    expect(actor.getSnapshot().value).toBe('stopped');
    expect(signals[0]?.aborted).toBe(true);
    actor.send({ type: 'user.message', text: 'second' });
    await waitForState(actor, (s) => s.value === 'completed');
    expect(signals[1]?.aborted).toBe(false);
    expect(actor.getSnapshot().context.state.finalResponse()).toBe('second answer');
    actor.stop();
  });

  it('answers synchronous hooks at once: a beforeExecution hook that stops ends the run within the send', () => {
    const hooks: Hook[] = [
      {
        beforeExecution: () => {
          throw new AgentStopError('not today');
        },
      },
    ];
    const actor = createAgent({ driver: forever(), tools: { add }, hooks }).createActor(question());
    actor.start();
    actor.send({ type: 'execute' });
    expect(actor.getSnapshot().value).toBe('stopped');
    expect(actor.getSnapshot().context.state.stopReason()).toBe(StopReason.StopRequested);
    actor.stop();
  });

  it('a stop during async hooks aborts them and drops their late answer', async () => {
    let hookSignal: AbortSignal | undefined;
    let answerLate: () => void = () => {};
    let finish: () => void = () => {};
    const hooks: Hook[] = [
      {
        // ignores its signal, and answers with a changed state after the stop
        beforeStep: (state, { signal }) => {
          hookSignal = signal;
          return new Promise<AgentState>((resolve) => {
            answerLate = () => resolve(state.withMetadata('late', true));
          });
        },
        afterExecution: (_state, { signal }) => {
          expect(signal.aborted).toBe(false); // the next stage gets a fresh signal
          return new Promise<undefined>((resolve) => {
            finish = () => resolve(undefined);
          });
        },
      },
    ];
    const actor = createAgent({ driver: forever(), tools: { add }, hooks }).createActor(question());
    actor.start();
    actor.send({ type: 'execute' });
    await vi.waitUntil(() => hookSignal !== undefined);
    actor.send({ type: 'stop' });
    expect(hookSignal?.aborted).toBe(true);
    expect(actor.getSnapshot().value).toEqual({ inProgress: { afterExecution: 'runHooks' } });
    answerLate();
    // every promise turn the late answer could take has run by the next macrotask
    await new Promise((resolve) => setImmediate(resolve));
    // the late beforeStep answer did not end the afterExecution stage, nor change the state
    expect(actor.getSnapshot().value).toEqual({ inProgress: { afterExecution: 'runHooks' } });
    finish();
    await waitForState(actor, (s) => s.value === 'stopped');
    expect(actor.getSnapshot().context.state.metadata().late).toBeUndefined();
    actor.stop();
  });

  it('stops at once when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const state = await createAgent({ driver: forever(), tools: { add } }).execute(question(), {
      signal: controller.signal,
    });
    expect(state.status()).toBe(ExecutionStatus.Stopped);
    expect(state.stopReason()).toBe(StopReason.UserRequested);
    expect(state.stepCount()).toBe(0);
  });

  it('serves a multi-turn session: one execution per user message, back to pending shape in between', async () => {
    const driver = scriptedDriver([{ text: 'Hello!' }, { toolCalls: [addCall()] }, { text: '5' }]);
    const agent = createAgent({ driver, tools: { add } });
    const actor = agent.createActor(AgentState.empty());
    actor.start();
    expect(actor.getSnapshot().value).toBe('pending');
    actor.send({ type: 'user.message', text: 'Hi' });
    await waitForState(actor, (s) => s.value === 'completed');
    const first = actor.getSnapshot().context.state;
    expect(first.finalResponse()).toBe('Hello!');
    expect(first.executionCount()).toBe(1);

    actor.send({ type: 'user.message', text: 'What is 2 + 3?' });
    await waitForState(actor, (s) => s.value === 'completed' && s.context.state.executionCount() === 2);
    const second = actor.getSnapshot().context.state;
    expect(second.finalResponse()).toBe('5');
    expect(second.stepCount()).toBe(2);
    expect(second.executionId()).not.toBe(first.executionId());
    expect(second.agentId()).toBe(first.agentId());
    expect(second.messages().map((m) => m.content)).toEqual(['Hi', 'Hello!', 'What is 2 + 3?', '', '5', '5']);
    actor.stop();
  });

  it('emits typed events in order with ids, step numbers and the stop reason', async () => {
    const driver = scriptedDriver([
      { toolCalls: [addCall()] },
      { toolCalls: [addCall(1, 1)] },
      { text: '5' },
    ]);
    const actor = createAgent({ driver, tools: { add } }).createActor(question());
    const events = recordEvents(actor);
    actor.start();
    actor.send({ type: 'execute' });
    await waitForState(actor, (s) => s.value === 'completed');
    const state = actor.getSnapshot().context.state;
    expect(events.map((e) => ('stepNumber' in e ? `${e.type}#${e.stepNumber}` : e.type))).toEqual([
      'execution.started',
      'step.started#1',
      'tool.started#1',
      'tool.finished#1',
      'step.finished#1',
      'continuation.evaluated#1',
      'step.started#2',
      'tool.started#2',
      'tool.finished#2',
      'step.finished#2',
      'continuation.evaluated#2',
      'step.started#3',
      'step.finished#3',
      'continuation.evaluated#3',
      'execution.finished',
    ]);
    for (const event of events) {
      expect(event.agentId).toBe(state.agentId());
      expect(event.executionId).toBe(state.executionId());
      expect(event.parentAgentId).toBeNull();
    }
    const evaluated = events.filter((e) => e.type === 'continuation.evaluated');
    expect(evaluated.map((e) => e.type === 'continuation.evaluated' && e.shouldStop)).toEqual([
      false,
      false,
      true,
    ]);
    expect(events.find((e) => e.type === 'tool.finished')).toMatchObject({
      toolName: 'add',
      ok: true,
      blocked: false,
    });
    expect(events.at(-1)).toMatchObject({
      type: 'execution.finished',
      status: 'completed',
      stopReason: 'completed',
      stepCount: 3,
    });
    const finished = events.find((e) => e.type === 'step.finished');
    expect(finished).toMatchObject({
      stepType: 'tool_execution',
      stepId: state.steps()[0]?.id(),
      finishReason: 'tool-calls',
    });
    actor.stop();
  });

  it('passes every event of an execute() run to onEvent', async () => {
    const events: string[] = [];
    await createAgent({ driver: toolThenAnswer(), tools: { add } }).execute(question(), {
      onEvent: (e) => events.push(e.type),
    });
    expect(events[0]).toBe('execution.started');
    expect(events).toContain('tool.finished');
    expect(events.at(-1)).toBe('execution.finished');
  });

  it('reports the stop reason and source in continuation.evaluated when a guard stops the run', async () => {
    const actor = createAgent({
      driver: forever(),
      tools: { add },
      budget: new ExecutionBudget({ maxTokens: 100 }),
    }).createActor(question());
    const events = recordEvents(actor);
    actor.start();
    actor.send({ type: 'execute' });
    await waitForState(actor, (s) => s.value === 'stopped');
    expect(events.filter((e) => e.type === 'step.started')).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({
      type: 'execution.finished',
      status: 'stopped',
      stopReason: 'token_limit_reached',
    });
    actor.stop();
  });

  it('refuses a bad definition with a typed error naming the field', () => {
    expect(() => createAgent({})).toThrow(InvalidDefinitionError);
    expect(() => createAgent({})).toThrow(/model is missing/);
    expect(() => createAgent({ driver: toolThenAnswer(), budget: { maxSteps: 3 } as never })).toThrow(
      /budget must be an ExecutionBudget/,
    );
    expect(() => createAgent({ driver: toolThenAnswer(), tools: { x: {} as never } })).toThrow(
      /tools\.x needs an inputSchema/,
    );
    expect(() => createAgent({ driver: toolThenAnswer(), toolConcurrency: 0 })).toThrow(/toolConcurrency/);
  });

  it('runs an execution from a state that already has one finished, as the next execution', async () => {
    const agent = createAgent({ driver: scriptedDriver([{ text: 'one' }, { text: 'two' }]) });
    const first = await agent.execute(question());
    const second = await agent.execute(first.withUserMessage('again'));
    expect(second.executionCount()).toBe(2);
    expect(second.finalResponse()).toBe('two');
    expect(second.stepCount()).toBe(1);
  });
});
