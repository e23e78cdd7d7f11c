/** A person's stop, recorded as a `user_requested` signal, is sent again where it came (#36). */
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  type AgentDefinition,
  AgentState,
  createAgent,
  type Driver,
  defineTool,
  ExecutionBudget,
  scriptedDriver,
} from '../../src/index';

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
});
