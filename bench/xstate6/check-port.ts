/**
 * Checks that the XState 6 port (chart6/) behaves as machines/*.ts on XState 5, before its figures
 * are believed: (1) with the real actions and guards and a scripted driver and tool executor (the
 * real AgentState updates of bench/workload.ts's plain loop), both versions end alike (status,
 * steps, final text, message count, usage) and emit the same events in the same order; (2) the chart-floor stubs take the same microsteps
 * (the state each microstep's transition left from) on both.
 *
 *   node --import tsx check-port.ts
 */
import assert from 'node:assert/strict';
import * as v6 from 'xstate';
import * as v5 from 'xstate5';
import { chartFloor6 } from './chart-floor-v6';
import { agentLoop as agentLoop6 } from './chart6/agentLoop';
import { runToOutcome as runToOutcome6 } from './chart6/run-to-outcome';
import { stepWorker as stepWorker6 } from './chart6/step-worker';
import { chartFloor as chartFloor5 } from './repo/bench/peers/chart-floor';
import { agentLoop as agentLoop5 } from './repo/machines/agentLoop';
import { AgentState, AgentStep, InferenceResponse, Message, ToolExecution, Usage } from './repo/src/index';
import { runToOutcome as runToOutcome5 } from './repo/src/runtime/run-to-outcome';
import { stepWorker as stepWorker5 } from './repo/src/runtime/step-worker';

/** The model's answer for the step in flight: a tool call, or on the last step the final text. */
function answer(state: AgentState, steps: number): AgentState {
  const i = state.stepCount();
  const last = i === steps - 1;
  const call = { id: `call-${i}`, name: 'echo', args: { n: i } };
  const toolCalls = last ? [] : [call];
  return state.withCurrentStep(
    AgentStep.of({
      inputMessages: state.messageList(),
      outputMessages: [Message.assistant(last ? 'done' : '', toolCalls)],
      inferenceResponse: InferenceResponse.of({
        text: last ? 'done' : '',
        toolCalls,
        usage: Usage.of({ inputTokens: 10, outputTokens: 5 }),
      }),
    }),
  );
}
/** The tool executor: the step's one call run, its result appended. */
function runTool(state: AgentState): AgentState {
  const step = state.currentStep()!;
  const call = step.requestedToolCalls()[0]!;
  return state.withCurrentStep(
    step
      .withToolExecutions([ToolExecution.succeeded(call, 'ok', 0)])
      .withOutputMessages([...step.outputMessages(), Message.toolResult(call, 'ok')]),
  );
}

/** Event fields that differ between two runs of the same workload (ids, times). */
const VOLATILE = new Set([
  'executionId',
  'agentId',
  'stepId',
  'durationMs',
  'parentExecutionId',
  'timestamp',
]);
function stable(event: Record<string, unknown>): string {
  return JSON.stringify(event, (key, value) => (VOLATILE.has(key) ? undefined : value));
}

async function realRun(version: 5 | 6, steps: number, failAt = -1) {
  const events: string[] = [];
  const model = async ({ state }: { state: AgentState }) => {
    if (state.stepCount() === failAt) throw new Error('model down');
    return answer(state, steps);
  };
  const tool = async ({ state }: { state: AgentState }) => runTool(state);
  const input = { state: AgentState.empty().withUserMessage('go') };
  let state: AgentState;
  if (version === 5) {
    const actor = v5.createActor(
      agentLoop5.provide({
        actors: { driver: stepWorker5('driver', model), toolExecutor: stepWorker5('toolExecutor', tool) },
      }),
      { input },
    );
    actor.on('*', (e) => events.push(stable(e as never)));
    state = await runToOutcome5(actor as never, undefined);
  } else {
    const actor = v6.createActor(
      agentLoop6.provide({
        actors: { driver: stepWorker6('driver', model), toolExecutor: stepWorker6('toolExecutor', tool) },
      }),
      {
        input,
      } as never,
    );
    actor.on('*', (e: unknown) => events.push(stable(e as never)));
    state = await runToOutcome6(actor);
  }
  return { state, events };
}

for (const steps of [1, 3]) {
  const a = await realRun(5, steps);
  const b = await realRun(6, steps);
  assert.equal(a.state.stepCount(), steps);
  assert.equal(b.state.stepCount(), steps);
  assert.equal(b.state.status(), a.state.status());
  assert.equal(b.state.finalResponse(), a.state.finalResponse());
  assert.equal(b.state.messageList().size, a.state.messageList().size);
  assert.deepEqual(b.state.usage(), a.state.usage());
  assert.deepEqual(b.events, a.events);
  console.log(
    `real actions, ${steps} steps: same outcome (${a.state.status()}) and the same ${a.events.length} events`,
  );
}
{
  // the model call of the second step fails: `failing`, onError, afterExecution, `failed`
  const a = await realRun(5, 3, 1);
  const b = await realRun(6, 3, 1);
  assert.equal(a.state.status(), 'failed');
  assert.equal(b.state.status(), a.state.status());
  assert.equal(b.state.stepCount(), a.state.stepCount());
  assert.deepEqual(b.events, a.events);
  console.log(
    `real actions, a failed model call: same outcome (failed) and the same ${a.events.length} events`,
  );
}

/**
 * Each microstep of the root actor, by the state whose transition it took (XState 6 records a
 * transition function, not its targets; the same sources in the same order, ending in the same
 * state, is the same path).
 */
type Transition = { source: { id: string } };
const show = (t: Transition) => t.source.id;

for (const steps of [1, 3]) {
  const path5: string[] = [];
  const path6: string[] = [];
  const input = { state: { calls: 0, tools: false } as never, reports: false };
  const actor5 = v5.createActor(chartFloor5(steps), {
    input,
    inspect: (e) => {
      if (e.type === '@xstate.microstep' && e.actorRef === actor5)
        for (const t of (e as unknown as { _transitions: Transition[] })._transitions) path5.push(show(t));
    },
  });
  await runToOutcome5(actor5 as never, undefined);
  const actor6 = v6.createActor(chartFloor6(steps), {
    input,
    inspect: (e: v6.InspectionEvent) => {
      if (e.type === '@xstate.transition' && e.actorRef === actor6)
        for (const t of e.microsteps as unknown as Transition[]) path6.push(show(t));
    },
  } as never);
  await runToOutcome6(actor6);
  assert.deepEqual(path6, path5);
  console.log(`chart floor, ${steps} steps: the same ${path5.length} microsteps`);
}
