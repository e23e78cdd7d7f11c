import { context } from '@opentelemetry/api';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import type { SubagentDefinition } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import { add } from '../support/agents';
import { idOf, memoryTracer, parentOf } from '../support/otel';

const guarded = { ...add, needsApproval: true };
const approvalAgent = (tracer: ReturnType<typeof memoryTracer>['tracer']) =>
  createAgent({
    name: 'payer',
    driver: scriptedDriver([{ toolCalls: [{ id: 'c1', name: 'add', args: { a: 1, b: 2 } }] }, { text: '3' }]),
    tools: { add: guarded },
    telemetry: { tracer },
  });

/** The waiting run's span and the decided run's span: one link from the second to the first. */
function expectLinkedRuns(runs: readonly ReadableSpan[]) {
  expect(runs).toHaveLength(2);
  const [waiting, decided] = runs as [ReadableSpan, ReadableSpan];
  expect(waiting.attributes['agent_machine.awaiting_approval']).toBe(true);
  expect(waiting.attributes['agent_machine.status']).toBe('awaiting_approval');
  expect(decided.attributes).toMatchObject({
    'agent_machine.status': 'completed',
    'agent_machine.stop_reason': 'completed',
    'agent_machine.execution.id': waiting.attributes['agent_machine.execution.id'],
  });
  expect(decided.attributes['agent_machine.awaiting_approval']).toBeUndefined();
  expect(decided.links.map((l) => l.context)).toEqual([
    expect.objectContaining({
      traceId: waiting.spanContext().traceId,
      spanId: waiting.spanContext().spanId,
    }),
  ]);
  expect(decided.links[0]?.attributes).toEqual({ 'agent_machine.link': 'awaited_approval' });
  return { waiting, decided };
}

describe('OpenTelemetry spans of a run that waits for approval', () => {
  const otel = memoryTracer();
  beforeEach(() => {
    otel.reset();
    context.disable();
  });

  it('links the decided run (agent.decide) to the waiting run, and the decided run tells its final status', async () => {
    const agent = approvalAgent(otel.tracer);
    const waiting = await agent.execute(AgentState.empty().withUserMessage('1 + 2?'));
    expect(waiting.pendingApprovals()).toHaveLength(1);
    const done = await agent.decide(waiting, [{ toolCallId: 'c1', type: 'approve' }]);
    expect(done.status()).toBe(ExecutionStatus.Completed);

    const { decided } = expectLinkedRuns(otel.named('invoke_agent payer'));
    const [tool] = otel.named('execute_tool add');
    expect(tool && parentOf(tool)).toBe(idOf(decided));
  });

  it("links a subagent's decided run to its waiting run, under the caller's decided run", async () => {
    const payer: SubagentDefinition = {
      description: 'Pays',
      driver: scriptedDriver([
        { toolCalls: [{ id: 't1', name: 'add', args: { a: 1, b: 2 } }] },
        { text: '3' },
      ]),
      tools: { add: guarded },
    };
    const root = createAgent({
      name: 'lead',
      driver: scriptedDriver([
        { toolCalls: [{ id: 'p1', name: 'payer', args: { task: 'pay' } }] },
        { text: 'paid' },
      ]),
      subagents: { agents: { payer } },
      telemetry: { tracer: otel.tracer },
    });
    const waiting = await root.execute(AgentState.empty().withUserMessage('Pay'));
    expect(waiting.pendingApprovals().map((p) => p.path)).toEqual([['payer']]);
    const done = await root.decide(waiting, [{ toolCallId: 't1', path: ['payer'], type: 'approve' }]);
    expect(done.status()).toBe(ExecutionStatus.Completed);

    const { decided: lead } = expectLinkedRuns(otel.named('invoke_agent lead'));
    const { decided: child } = expectLinkedRuns(otel.named('invoke_agent payer'));
    const calls = otel.named('execute_tool payer');
    expect(parentOf(child)).toBe(idOf(calls.at(-1) as ReadableSpan));
    expect(parentOf(calls.at(-1) as ReadableSpan)).toBe(idOf(lead));
  });

  it('ends the waiting span when a long-lived actor rests, and starts a linked one when it goes on', async () => {
    const agent = approvalAgent(otel.tracer);
    const actor = agent.createActor(AgentState.empty());
    const finished = new Promise<void>((resolve) => actor.on('execution.finished', () => resolve()));
    actor.on('approval.requested', () => actor.send({ type: 'approve', toolCallId: 'c1' }));
    actor.start();
    actor.send({ type: 'user.message', text: '1 + 2?' });
    await finished;
    await vi.waitFor(() => expect(otel.named('invoke_agent payer')).toHaveLength(2));
    actor.stop();

    const { waiting, decided } = expectLinkedRuns(otel.named('invoke_agent payer'));
    // the run goes on under the same parent (none here: a trace of its own, linked)
    expect(parentOf(decided)).toBe(parentOf(waiting));
    expect(waiting.endTime <= decided.startTime).toBe(true);
    const [tool] = otel.named('execute_tool add');
    expect(tool && parentOf(tool)).toBe(idOf(decided));
    const chats = otel.named('chat');
    expect(chats.map(parentOf)).toEqual([idOf(waiting), idOf(decided)]);
  });
});
