/**
 * Tool and text reports (`tool.started`, `tool.finished`, `text.delta`, `context.compacted`) reach
 * listeners and inspectors as events of the agent actor, without a macrostep of their own: they
 * change nothing in the agent's state, and a snapshot for each made a listened run a quarter
 * slower (#38).
 */

import { describe, expect, it } from 'vitest';
import type { InspectionEvent } from 'xstate';
import { z } from 'zod';
import type { Driver } from '../../src/drivers/driver';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import type { AgentEvent } from '../../src/state/loop-events';
import { defineTool } from '../../src/tools/define-tool';

const REPORTS = new Set(['tool.started', 'tool.finished', 'text.delta']);

const add = defineTool({
  description: 'Add',
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});
/** The scripted answers, with the final text reported as a delta first, as a streaming model's is. */
function streamingDriver(): Driver {
  const script = scriptedDriver([
    { toolCalls: [{ name: 'add', args: { a: 2, b: 3 }, id: 'c1' }] },
    { text: 'It is 5.' },
  ]);
  return {
    name: 'streaming',
    infer: async (state, context) => {
      if (state.stepCount() === 1)
        context.report?.({
          type: 'text.delta',
          agentId: state.agentId(),
          parentAgentId: state.parentAgentId(),
          executionId: state.executionId() ?? '',
          stepNumber: state.stepCount() + 1,
          delta: 'It is 5.',
        });
      return script.infer(state, context);
    },
  };
}
const agent = () => createAgent({ driver: streamingDriver(), tools: { add } });
const question = () => AgentState.empty().withUserMessage('2 + 3?');

/** What an inspector sees of the root agent actor, one line per inspection event. */
function describeInspection(events: InspectionEvent[]): string[] {
  const lines: string[] = [];
  for (const e of events) {
    if (e.actorRef.sessionId !== e.rootId) continue;
    if (e.type === '@xstate.event') lines.push(`event ${e.event.type}`);
    else if (e.type === '@xstate.snapshot') lines.push(`snapshot ${e.event.type}`);
    else if (e.type === '@xstate.action' && e.action.type === 'xstate.emit')
      lines.push(`emit ${(e.action.params as { event: AgentEvent }).event.type}`);
  }
  return lines;
}

describe('tool and text reports', () => {
  it('show in the inspector as events the agent received and emitted, with no snapshot of their own', async () => {
    const inspected: InspectionEvent[] = [];
    const heard: string[] = [];
    const state = await agent().execute(question(), {
      inspect: (e) => inspected.push(e),
      onEvent: (e) => heard.push(e.type),
    });
    expect(state.finalResponse()).toBe('It is 5.');
    const lines = describeInspection(inspected);
    for (const type of ['tool.started', 'tool.finished', 'text.delta']) {
      expect(lines).toContain(`event ${type}`);
      expect(lines).toContain(`emit ${type}`);
      expect(lines.indexOf(`event ${type}`)).toBeLessThan(lines.indexOf(`emit ${type}`));
    }
    expect(
      lines.filter((l) => l.startsWith('snapshot ') && REPORTS.has(l.slice('snapshot '.length))),
    ).toEqual([]);
    // the order of the run, as listeners hear it
    expect(heard.filter((t) => t !== 'continuation.evaluated')).toEqual([
      'execution.started',
      'step.started',
      'tool.started',
      'tool.finished',
      'step.finished',
      'step.started',
      ...heard.filter((t) => t === 'text.delta'),
      'step.finished',
      'execution.finished',
    ]);
    expect(heard.filter((t) => t === 'text.delta').length).toBeGreaterThan(0);
  });

  it('reach the listeners of an agent actor of yours (actor.on)', async () => {
    const actor = agent().createActor(question());
    const heard: string[] = [];
    actor.on('*', (e) => heard.push(e.type));
    actor.start();
    actor.send({ type: 'execute' });
    await new Promise<void>((resolve) => {
      const subscription = actor.subscribe((s) => {
        if (s.value === 'completed') {
          subscription.unsubscribe();
          resolve();
        }
      });
    });
    actor.stop();
    expect(heard).toEqual(expect.arrayContaining(['tool.started', 'tool.finished', 'text.delta']));
  });
});
