/**
 * A run no one can listen to (`execute()` without `onEvent` or an inspector) runs on the agent's
 * quiet chart, whose emitting actions XState resolves without executing them: no event is built
 * for listeners the actor cannot have (#38). These tests pin that XState behaviour and that such
 * a run ends as a listened one does.
 */
import { describe, expect, it } from 'vitest';
import { createActor, type InspectionEvent, waitFor } from 'xstate';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { createAgent } from '../../src/runtime/create-agent';
import { quietMachine } from '../../src/runtime/quiet-machine';
import { AgentState } from '../../src/state/agent-state';
import type { AgentEvent } from '../../src/state/loop-events';
import { defineTool } from '../../src/tools/define-tool';

const add = defineTool({
  description: 'Add',
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});
const agent = () =>
  createAgent({
    driver: scriptedDriver([{ toolCalls: [{ name: 'add', args: { a: 2, b: 3 }, id: 'c1' }] }, { text: '5' }]),
    tools: { add },
  });
const question = () => AgentState.empty().withUserMessage('2 + 3?');

describe('a run no one listens to', () => {
  it('executes no emitting action, and ends as a listened run does', async () => {
    const quietAgent = agent();
    const actions: string[] = [];
    const input = quietAgent.inputFor(question(), undefined, undefined, false);
    const actor = createActor(quietMachine(quietAgent.machine), {
      input,
      inspect: (event: InspectionEvent) => {
        if (event.type === '@xstate.action' && event.actorRef === actor) actions.push(event.action.type);
      },
    }).start();
    actor.send({ type: 'execute' });
    const quiet = (await waitFor(actor, (s) => s.hasTag('outcome'))).context.state;
    actor.stop();
    expect(actions).not.toContain('xstate.emit');

    const events: AgentEvent[] = [];
    const heard = await agent().execute(question(), { onEvent: (event) => events.push(event) });
    expect(events.map((e) => e.type)).toContain('step.finished');
    expect(quiet.status()).toBe('completed');
    expect(quiet.finalResponse()).toBe(heard.finalResponse());
    expect(quiet.stepCount()).toBe(heard.stepCount());
    expect(quiet.toolExecutions().map((e) => e.value())).toEqual([5]);
  });
});
