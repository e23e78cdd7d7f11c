import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import { InvalidDefinitionError } from '../../src/runtime/agent-definition';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import { defineTool } from '../../src/tools/define-tool';

const SECRET = 'a secret only the server knows';

function bankAgent(options: { approvalSecret?: string; nested?: boolean } = {}) {
  const transfers: unknown[] = [];
  const transfer = defineTool({
    description: 'Transfer money',
    inputSchema: z.object({ to: z.string(), amount: z.number() }),
    needsApproval: true,
    execute: async (input) => {
      transfers.push(input);
      return 'sent';
    },
  });
  const transferScript = () =>
    scriptedDriver([
      { toolCalls: [{ name: 'transfer', args: { to: 'bob', amount: 40 }, id: 't1' }] },
      { text: 'paid' },
    ]);
  const agent = options.nested
    ? createAgent({
        driver: scriptedDriver([
          { toolCalls: [{ name: 'payer', args: { task: 'pay' }, id: 'p1' }] },
          { text: 'done' },
        ]),
        store: new InMemorySessionStore(),
        ...(options.approvalSecret && { approvalSecret: options.approvalSecret }),
        subagents: {
          agents: { payer: { description: 'Pays', driver: transferScript(), tools: { transfer } } },
        },
      })
    : createAgent({
        driver: transferScript(),
        tools: { transfer },
        store: new InMemorySessionStore(),
        ...(options.approvalSecret && { approvalSecret: options.approvalSecret }),
      });
  return { agent, transfers };
}

const ask = () => AgentState.empty().withUserMessage('Pay Bob 40');

describe('approvals bound to the exact call (approvalSecret)', () => {
  it('signs each pending call, at the root and inside subagents; the signed decision runs', async () => {
    for (const nested of [false, true]) {
      const { agent, transfers } = bankAgent({ approvalSecret: SECRET, nested });
      const waiting = await agent.execute(ask(), { sessionId: 's1' });
      const [pending] = waiting.pendingApprovals();
      expect(pending?.signature).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(pending?.path).toEqual(nested ? ['payer'] : undefined);
      const done = await agent.decide('s1', [
        { toolCallId: 't1', type: 'approve', signature: pending?.signature },
      ]);
      expect(done.status()).toBe(ExecutionStatus.Completed);
      expect(transfers).toEqual([{ to: 'bob', amount: 40 }]);
    }
  });

  it('refuses a decision without a signature, or with a forged one, and changes nothing', async () => {
    const { agent, transfers } = bankAgent({ approvalSecret: SECRET, nested: true });
    const waiting = await agent.execute(ask(), { sessionId: 's1' });
    const signature = waiting.pendingApprovals()[0]?.signature as string;
    await expect(agent.decide('s1', [{ toolCallId: 't1', type: 'approve' }])).rejects.toMatchObject({
      code: 'APPROVAL_SIGNATURE_INVALID',
    });
    const forged = `${signature.slice(0, -1)}${signature.endsWith('A') ? 'B' : 'A'}`;
    await expect(
      agent.decide('s1', [{ toolCallId: 't1', type: 'reject', signature: forged }]),
    ).rejects.toMatchObject({ code: 'APPROVAL_SIGNATURE_INVALID', toolCallId: 't1' });
    expect(transfers).toEqual([]);
    const stored = await agent.definition.store?.load('s1');
    expect(stored?.state.pendingApprovals().map((p) => p.toolCallId)).toEqual(['t1']);
  });

  it('refuses the signature of another session, and one for an input altered since it was signed', async () => {
    const { agent, transfers } = bankAgent({ approvalSecret: SECRET });
    const first = await agent.execute(ask(), { sessionId: 'first' });
    await agent.execute(ask(), { sessionId: 'second' });
    const signature = first.pendingApprovals()[0]?.signature;
    await expect(
      agent.decide('second', [{ toolCallId: 't1', type: 'approve', signature }]),
    ).rejects.toMatchObject({ code: 'APPROVAL_SIGNATURE_INVALID' });

    // someone with access to the store raises the amount after the person saw the call
    const store = agent.definition.store as InMemorySessionStore;
    const stored = await store.load('first');
    const json = JSON.parse(JSON.stringify(stored?.state));
    const toolCall = json.execution.awaitingApproval.step.inferenceResponse.toolCalls[0];
    toolCall.args.amount = 4000;
    await store.save('first', AgentState.fromJSON(json), stored?.version ?? null);
    await expect(
      agent.decide('first', [{ toolCallId: 't1', type: 'approve', signature }]),
    ).rejects.toMatchObject({ code: 'APPROVAL_SIGNATURE_INVALID' });
    expect(transfers).toEqual([]);
  });

  it('signs two parallel calls of one subagent waiting on the same id apart; each signature decides only its call', async () => {
    const transfers: unknown[] = [];
    const transfer = defineTool({
      description: 'Transfer money',
      inputSchema: z.object({ to: z.string(), amount: z.number() }),
      needsApproval: true,
      execute: async (input) => {
        transfers.push(input);
        return 'sent';
      },
    });
    const agent = createAgent({
      driver: scriptedDriver([
        {
          toolCalls: [
            { name: 'payer', args: { task: 'pay' }, id: 'p1' },
            { name: 'payer', args: { task: 'pay' }, id: 'p2' },
          ],
        },
        { text: 'done' },
      ]),
      store: new InMemorySessionStore(),
      approvalSecret: SECRET,
      subagents: {
        agents: {
          payer: {
            description: 'Pays',
            driver: scriptedDriver([
              { toolCalls: [{ name: 'transfer', args: { to: 'bob', amount: 40 }, id: 't1' }] },
              { text: 'paid' },
            ]),
            tools: { transfer },
          },
        },
      },
    });
    const waiting = await agent.execute(ask(), { sessionId: 's1' });
    const [first, second] = waiting.pendingApprovals();
    expect(first?.signature).not.toBe(second?.signature);
    await expect(
      agent.decide('s1', [
        { toolCallId: 't1', type: 'approve', callPath: ['p2'], signature: first?.signature },
      ]),
    ).rejects.toMatchObject({ code: 'APPROVAL_SIGNATURE_INVALID' });
    const done = await agent.decide('s1', [
      { toolCallId: 't1', type: 'approve', callPath: ['p1'], signature: first?.signature },
      { toolCallId: 't1', type: 'reject', callPath: ['p2'], signature: second?.signature },
    ]);
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(transfers).toEqual([{ to: 'bob', amount: 40 }]);
  });

  it('refuses a signature kept from an earlier turn for an identical call asked again', async () => {
    const transfers: unknown[] = [];
    const transfer = defineTool({
      description: 'Transfer money',
      inputSchema: z.object({ to: z.string(), amount: z.number() }),
      needsApproval: true,
      execute: async (input) => {
        transfers.push(input);
        return 'sent';
      },
    });
    const pay = { toolCalls: [{ name: 'transfer', args: { to: 'bob', amount: 40 }, id: 't1' }] };
    const agent = createAgent({
      driver: scriptedDriver([pay, { text: 'paid' }, pay, { text: 'paid again' }]),
      tools: { transfer },
      store: new InMemorySessionStore(),
      approvalSecret: SECRET,
    });
    const firstTurn = await agent.chat('s1', 'Pay Bob 40');
    const kept = firstTurn.pendingApprovals()[0]?.signature;
    const paid = await agent.decide('s1', [{ toolCallId: 't1', type: 'approve', signature: kept }]);
    expect(paid.finalResponse()).toBe('paid');
    const secondTurn = await agent.chat('s1', 'Pay Bob 40 once more');
    expect(secondTurn.pendingApprovals()[0]).toMatchObject({
      toolCallId: 't1',
      args: { to: 'bob', amount: 40 },
    });
    expect(secondTurn.pendingApprovals()[0]?.signature).not.toBe(kept);
    await expect(
      agent.decide('s1', [{ toolCallId: 't1', type: 'approve', signature: kept }]),
    ).rejects.toMatchObject({ code: 'APPROVAL_SIGNATURE_INVALID' });
    expect(transfers).toHaveLength(1);
  });

  it('refuses a signature kept from a subagent step for the same call asked again in its next step', async () => {
    const transfers: unknown[] = [];
    const transfer = defineTool({
      description: 'Transfer money',
      inputSchema: z.object({ to: z.string(), amount: z.number() }),
      needsApproval: true,
      execute: async (input) => {
        transfers.push(input);
        return 'sent';
      },
    });
    const pay = { toolCalls: [{ name: 'transfer', args: { to: 'bob', amount: 40 }, id: 't1' }] };
    const agent = createAgent({
      driver: scriptedDriver([
        { toolCalls: [{ name: 'payer', args: { task: 'pay' }, id: 'p1' }] },
        { text: 'done' },
      ]),
      store: new InMemorySessionStore(),
      approvalSecret: SECRET,
      subagents: {
        agents: {
          payer: {
            description: 'Pays',
            driver: scriptedDriver([pay, pay, { text: 'paid' }]),
            tools: { transfer },
          },
        },
      },
    });
    const first = await agent.execute(ask(), { sessionId: 's1' });
    const kept = first.pendingApprovals()[0]?.signature;
    const again = await agent.decide('s1', [{ toolCallId: 't1', type: 'approve', signature: kept }]);
    expect(again.pendingApprovals()).toMatchObject([{ toolCallId: 't1', callPath: ['p1'] }]);
    await expect(
      agent.decide('s1', [{ toolCallId: 't1', type: 'approve', signature: kept }]),
    ).rejects.toMatchObject({ code: 'APPROVAL_SIGNATURE_INVALID' });
    expect(transfers).toHaveLength(1);
  });

  it('without a secret, pending calls carry no signature and decisions need none', async () => {
    const { agent, transfers } = bankAgent({ nested: true });
    const waiting = await agent.execute(ask());
    expect(waiting.pendingApprovals()[0]).not.toHaveProperty('signature');
    await agent.decide(waiting, [{ toolCallId: 't1', type: 'approve', signature: 'ignored' }]);
    expect(transfers).toHaveLength(1);
  });

  it('refuses an empty secret when the agent is made', () => {
    expect(() => createAgent({ driver: scriptedDriver([{ text: 'x' }]), approvalSecret: '' })).toThrow(
      InvalidDefinitionError,
    );
  });
});
