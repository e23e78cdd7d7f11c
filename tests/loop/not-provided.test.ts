/**
 * The chart alone (`agentLoop`, not provided by `createAgent`) has no runtime: what only the runtime
 * can do (its workers, `keepSettledToolCalls`, `spawnSubagent`, `startsUnsafeCalls`) fails when
 * the run reaches it, with an error naming what is missing, instead of doing nothing.
 */
import { describe, expect, it } from 'vitest';
import { type AnyActorLogic, createActor } from 'xstate';
import { agentLoop, type LoopInput, LoopTag } from '../../machines/agentLoop';
import { NotProvidedError } from '../../machines/not-provided';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { stepWorker } from '../../src/runtime/step-worker';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';

const noSignal = new AbortController().signal;

/** The model's answer: one call of the tool `send`. */
const asksForTool = (state: AgentState) =>
  scriptedDriver([{ toolCalls: [{ id: 'call_1', name: 'send' }] }]).infer(state, {
    signal: noSignal,
    tools: {},
    report: () => {},
  }) as AgentState;

/** A worker that tells when it got its request, and never answers. */
function waitingWorker(id: 'driver' | 'toolExecutor') {
  let reached!: () => void;
  const working = new Promise<void>((resolve) => {
    reached = resolve;
  });
  const logic = stepWorker(id, () => {
    reached();
    return new Promise<AgentState>(() => {});
  });
  return { logic, working };
}

/**
 * Starts a run of the chart with only `actors` provided; `failed` is the error the actor stopped on
 * (or, when it reached an outcome instead, what it ended as).
 */
function runBare(actors: Record<string, AnyActorLogic>, input: Partial<LoopInput> = {}) {
  const actor = createActor(agentLoop.provide({ actors: actors as never }), {
    input: { state: AgentState.empty().withUserMessage('Go'), budget: ExecutionBudget.unlimited(), ...input },
  });
  const failed = new Promise<unknown>((resolve) => {
    actor.subscribe({
      next: (snapshot) => {
        if (snapshot.hasTag(LoopTag.outcome)) resolve(`no error: ended ${JSON.stringify(snapshot.value)}`);
      },
      error: resolve,
    });
  });
  actor.start();
  actor.send({ type: 'execute' });
  return { actor, failed };
}

function expectNotProvided(error: unknown, kind: string, implementation: string): void {
  expect(NotProvidedError.isInstance(error)).toBe(true);
  expect(error).toMatchObject({ name: 'NotProvidedError', code: 'NOT_PROVIDED', kind, implementation });
  expect((error as Error).message).toContain(`'${implementation}' ${kind}`);
}

describe('the chart without its runtime', () => {
  it("a stop fails, naming the action 'keepSettledToolCalls' as not provided", async () => {
    const driver = waitingWorker('driver');
    const { actor, failed } = runBare({ driver: driver.logic });
    await driver.working;
    actor.send({ type: 'stop' });
    expectNotProvided(await failed, 'action', 'keepSettledToolCalls');
  });

  it("a subagent call fails, naming the action 'spawnSubagent' as not provided", async () => {
    const tools = waitingWorker('toolExecutor');
    const driver = stepWorker('driver', ({ state }) => asksForTool(state));
    const { actor, failed } = runBare({ driver, toolExecutor: tools.logic });
    await tools.working;
    // what a subagent tool of a provided agent sends from inside the tool step
    actor.send({
      type: 'subagent.spawn',
      id: 'subagent:helper:call_1',
      name: 'helper',
      state: AgentState.empty(),
      budget: ExecutionBudget.unlimited(),
      toolCallId: 'call_1',
    });
    // the event is taken at once: the actor has failed by now
    expect(actor.getSnapshot().status).toBe('error');
    expectNotProvided(await failed, 'action', 'spawnSubagent');
  });

  it("a step with tool calls and somewhere to save fails, naming the guard 'startsUnsafeCalls' as not provided", async () => {
    const driver = stepWorker('driver', ({ state }) => asksForTool(state));
    const checkpoint = stepWorker('checkpoint', () => null);
    // a subagent's run: it saves its intents through its caller
    const { failed } = runBare({ driver, checkpoint }, { intentSave: async () => {} });
    expectNotProvided(await failed, 'guard', 'startsUnsafeCalls');
  });

  it("a run fails, naming the actor 'driver' as not provided", async () => {
    const { failed } = runBare({});
    expectNotProvided(await failed, 'actor', 'driver');
  });
});
