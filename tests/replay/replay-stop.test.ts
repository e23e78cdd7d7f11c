/**
 * A person's stop, recorded as a `user_requested` signal with where it came, is sent again there
 * (#36); a recording a replay cannot deliver again is refused up front.
 */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Driver } from '../../src/drivers/driver';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { Hook } from '../../src/hooks/hook';
import { UnreplayableRunError } from '../../src/replay/unreplayable-run';
import type { AgentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionBudget } from '../../src/state/execution-budget';
import { Message } from '../../src/state/message';
import { StopSignal } from '../../src/state/stop-signal';
import { defineTool } from '../../src/tools/define-tool';

/** A person stops the run once `at` is reached: the call in flight waits to be aborted. */
function stopper() {
  const person = new AbortController();
  const stopNow = (signal: AbortSignal) => {
    person.abort('Enough, thanks');
    return new Promise<never>((_, reject) =>
      signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
    );
  };
  return { signal: person.signal, stopNow };
}

const definition = (more: Partial<AgentDefinition>): AgentDefinition => ({
  driver: scriptedDriver([{ toolCalls: [{ id: 'c1', name: 'lookup', args: { q: 'x' } }] }, { text: 'done' }]),
  tools: {
    lookup: defineTool({
      description: 'Look up',
      inputSchema: z.object({ q: z.string() }),
      execute: async () => 'found',
    }),
  },
  budget: new ExecutionBudget({ maxSteps: 5 }),
  ...more,
});

async function record(more: Partial<AgentDefinition>, signal: AbortSignal): Promise<AgentState> {
  const done = await createAgent(definition(more)).execute(AgentState.empty().withUserMessage('find x'), {
    signal,
  });
  return AgentState.fromJSON(JSON.parse(JSON.stringify(done)));
}

describe('replaying a stopped run', () => {
  it('stops again during the tool call the person stopped, with the recorded message', async () => {
    const { signal, stopNow } = stopper();
    const tools = {
      lookup: defineTool({
        description: 'Look up',
        inputSchema: z.object({ q: z.string() }),
        execute: (_input, options) => stopNow(options.signal),
      }),
    };
    const recorded = await record({ tools }, signal);
    expect(recorded.stopReason()).toBe('user_requested');
    const { state, divergence } = await createAgent(definition({})).replay(recorded);
    expect(divergence).toBeNull();
    expect(state.stopReason()).toBe('user_requested');
    expect(JSON.stringify(state.execution()?.continuation())).toContain('Enough, thanks');
  });

  it('stops again during the model call the person stopped', async () => {
    const { signal, stopNow } = stopper();
    const script = scriptedDriver([{ toolCalls: [{ id: 'c1', name: 'lookup', args: { q: 'x' } }] }]);
    const driver: Driver = {
      name: 'slow',
      infer: (state, context) =>
        state.stepCount() === 0 ? script.infer(state, context) : stopNow(context.signal),
    };
    const recorded = await record({ driver }, signal);
    expect(recorded.stopReason()).toBe('user_requested');
    expect(recorded.stepCount()).toBe(1);
    const { state, divergence } = await createAgent(definition({ driver })).replay(recorded);
    expect(divergence).toBeNull();
    expect(state.stepCount()).toBe(1);
  });

  it('stops again in the hook stage the person stopped, without calling the hook', async () => {
    const { signal, stopNow } = stopper();
    // the person stops while the second step's beforeStep hook runs
    const slowReview: Hook = {
      name: 'review',
      beforeStep: (state, { signal: hookSignal }) =>
        state.stepCount() === 1 ? stopNow(hookSignal) : undefined,
    };
    const recorded = await record({ hooks: [slowReview] }, signal);
    expect(recorded.stepCount()).toBe(1);
    expect(recorded.execution()?.continuation().stopSignals[0]?.context).toEqual({
      during: 'beforeStep',
      stepCount: 1,
    });
    // replayed with a hook that would not stop: the stop comes from the recording
    let called = 0;
    const review: Hook = {
      name: 'review',
      beforeStep: () => {
        called++;
        return undefined;
      },
    };
    const { state, divergence } = await createAgent(definition({ hooks: [review] })).replay(recorded);
    expect(divergence).toBeNull();
    expect(called).toBe(1);
    expect(state.stopReason()).toBe('user_requested');
  });

  it("does not send a stop for a hook's own user_requested signal that its continuation overrode", async () => {
    // the hook adds a user_requested signal and asks to go on (#44 item 10): no person stopped the
    // run, so the replay must not stop it where the recording went on
    const asksToGoOn: Hook = {
      name: 'goOn',
      afterStep: (state) =>
        state.stepCount() === 1
          ? state.withStopSignal(StopSignal.userRequested('the hook asked')).withContinuationRequested()
          : undefined,
    };
    const recorded = await record({ hooks: [asksToGoOn] }, new AbortController().signal);
    // the run went on past the hook's signal
    expect(recorded.stepCount()).toBeGreaterThan(1);
    const { state, divergence } = await createAgent(definition({ hooks: [asksToGoOn] })).replay(recorded);
    expect(divergence).toBeNull();
    expect(state.stepCount()).toBe(recorded.stepCount());
    expect(state.stopReason()).toBe(recorded.stopReason());
  });

  it('refuses with UnreplayableRunError a message steered in after a final answer ended the run', async () => {
    const done = await createAgent(definition({})).execute(AgentState.empty().withUserMessage('find x'));
    const late = Message.withMetadata(Message.user('and y?'), { steered: true });
    const recorded = done.withSteeredMessages([late]);
    const refusal = await createAgent(definition({}))
      .replay(recorded)
      .catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(UnreplayableRunError);
    expect(refusal).toMatchObject({
      code: 'REPLAY_UNREPLAYABLE',
      reason: 'steered-after-last-step',
      stepNumber: 2,
    });
  });
});
