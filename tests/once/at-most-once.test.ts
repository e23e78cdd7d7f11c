import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Driver } from '../../src/drivers/driver';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { buildRunView } from '../../src/inspect/run-model';
import { FileSessionStore } from '../../src/persistence/file-session-store';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import type { SessionStore } from '../../src/persistence/session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ApprovalError } from '../../src/state/approval-error';
import { ExecutionStatus } from '../../src/state/execution-status';
import { defineTool } from '../../src/tools/define-tool';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-machine-once-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A driver that counts its model calls (a resumed run must not repeat an answered one). */
function counted(inner: Driver) {
  const calls = { n: 0 };
  const driver: Driver = {
    name: 'counted',
    infer: (state, context) => {
      calls.n++;
      return inner.infer(state, context);
    },
  };
  return { driver, calls };
}

const script = () =>
  scriptedDriver([
    {
      toolCalls: [
        { id: 'pay-1', name: 'pay', args: { amount: 5 } },
        { id: 'look-1', name: 'lookup', args: { q: 'x' } },
      ],
    },
    { text: 'done' },
  ]);

/**
 * An agent whose `pay` is unsafe and `lookup` idempotent. `crashAt` runs inside `pay`'s execute:
 * the test copies the store there, which is what a process killed at that moment leaves.
 */
function paymentAgent(store: SessionStore, options: { crashAt?: () => void; keys?: string[] } = {}) {
  const effects: string[] = [];
  const pay = defineTool({
    inputSchema: z.object({ amount: z.number() }),
    effect: 'unsafe',
    execute: async ({ amount }, { toolCallId, idempotencyKey }) => {
      options.crashAt?.();
      options.keys?.push(idempotencyKey);
      effects.push(toolCallId);
      return `paid ${amount}`;
    },
  });
  const lookup = defineTool({
    inputSchema: z.object({ q: z.string() }),
    execute: async ({ q }, { idempotencyKey }) => {
      options.keys?.push(idempotencyKey);
      return `found ${q}`;
    },
  });
  const { driver, calls } = counted(script());
  return { agent: createAgent({ driver, tools: { pay, lookup }, store }), effects, calls };
}

/** Runs the payment agent on a file store, copying the store as `pay` starts: the crash's leftovers. */
async function crashedInPay() {
  const dir = tempDir();
  const crashed = tempDir();
  const first = paymentAgent(new FileSessionStore(dir), {
    crashAt: () => cpSync(dir, crashed, { recursive: true }),
  });
  await first.agent.execute(AgentState.empty().withUserMessage('pay 5'), { sessionId: 's1' });
  return { store: new FileSessionStore(crashed), first };
}

describe('at most once: the intent save', () => {
  it('saves the step with its unsafe calls before their execute starts; a load finds them interrupted', async () => {
    const { store } = await crashedInPay();
    const loaded = await store.load('s1');
    expect(loaded?.state.status()).toBe(ExecutionStatus.InProgress);
    expect(loaded?.state.pendingApprovals()).toEqual([
      { toolCallId: 'pay-1', toolName: 'pay', args: { amount: 5 }, reason: 'interrupted' },
    ]);
  });

  it('saves once per step with unsafe calls, and never for steps without them', async () => {
    const saves: number[] = [];
    const inner = new InMemorySessionStore();
    const spy: SessionStore = {
      load: (id) => inner.load(id),
      save: async (id, state, version) => {
        saves.push(state.stepCount());
        return inner.save(id, state, version);
      },
      delete: (id) => inner.delete(id),
      list: () => inner.list(),
      close: () => inner.close(),
    };
    const { agent } = paymentAgent(spy);
    await agent.execute(AgentState.empty().withUserMessage('pay'), { sessionId: 's' });
    // start, intent of step 1, step 1, step 2, end
    expect(saves).toEqual([0, 0, 1, 2, 2]);

    const idempotentOnly = createAgent({
      driver: scriptedDriver([
        { toolCalls: [{ id: 'l', name: 'lookup', args: { q: 'x' } }] },
        { text: 'ok' },
      ]),
      tools: { lookup: defineTool({ inputSchema: z.object({ q: z.string() }), execute: () => 'x' }) },
      store: spy,
    });
    saves.length = 0;
    await idempotentOnly.execute(AgentState.empty().withUserMessage('look'), { sessionId: 't' });
    expect(saves).toEqual([0, 1, 2, 2]);
  });
});

describe('at most once: after a crash', () => {
  it('resume waits for a person on the interrupted call; no model call is repeated', async () => {
    const { store } = await crashedInPay();
    const again = paymentAgent(store);
    const waiting = await again.agent.resume('s1');
    expect(waiting.pendingApprovals().map((p) => [p.toolCallId, p.reason])).toEqual([
      ['pay-1', 'interrupted'],
    ]);
    expect(again.effects).toEqual([]);
    expect(again.calls.n).toBe(0);
    expect((await store.load('s1'))?.state.pendingApprovals()[0]?.reason).toBe('interrupted');
  });

  it('the run view lists the interrupted call with its reason', async () => {
    const { store } = await crashedInPay();
    const loaded = await store.load('s1');
    const view = buildRunView(JSON.parse(JSON.stringify(loaded?.state)));
    expect(view.agents[0]?.pendingApprovals).toEqual([
      {
        toolCallId: 'pay-1',
        toolName: 'pay',
        args: expect.stringContaining('"amount": 5'),
        path: [],
        reason: 'interrupted',
      },
    ]);
  });

  it('reject records it as not run: the model is told the outcome is unknown', async () => {
    const { store } = await crashedInPay();
    const again = paymentAgent(store);
    await again.agent.resume('s1');
    const done = await again.agent.decide('s1', [{ toolCallId: 'pay-1', type: 'reject' }]);
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(again.effects).toEqual([]);
    const pay = done
      .steps()[0]
      ?.toolExecutions()
      .find((e) => e.toolCallId() === 'pay-1');
    expect(pay?.wasBlocked()).toBe(true);
    expect(pay?.error()?.message).toMatch(/unknown; it was not run again/);
    // the idempotent call of the same step ran again; the model was asked only for the next step
    expect(
      done
        .steps()[0]
        ?.toolExecutions()
        .find((e) => e.toolCallId() === 'look-1')
        ?.value(),
    ).toBe('found x');
    expect(again.calls.n).toBe(1);
  });

  it('approve runs it again, with the same idempotencyKey', async () => {
    const keys: string[] = [];
    const dir = tempDir();
    const crashed = tempDir();
    const first = paymentAgent(new FileSessionStore(dir), {
      keys,
      crashAt: () => {
        if (keys.length === 0) cpSync(dir, crashed, { recursive: true });
      },
    });
    await first.agent.execute(AgentState.empty().withUserMessage('pay'), { sessionId: 's1' });
    const firstPayKey = keys[0];
    const again = paymentAgent(new FileSessionStore(crashed), { keys });
    await again.agent.resume('s1');
    const done = await again.agent.decide('s1', [{ toolCallId: 'pay-1', type: 'approve' }]);
    expect(again.effects).toEqual(['pay-1']);
    expect(done.finalResponse()).toBe('done');
    expect(keys.at(-2)).toBe(firstPayKey);
  });

  it("complete records the person's result without running the call", async () => {
    const { store } = await crashedInPay();
    const again = paymentAgent(store);
    const done = await again.agent.decide('s1', [
      { toolCallId: 'pay-1', type: 'complete', result: { receipt: 'r-9' } },
    ]);
    expect(again.effects).toEqual([]);
    expect(done.status()).toBe(ExecutionStatus.Completed);
    const pay = done
      .steps()[0]
      ?.toolExecutions()
      .find((e) => e.toolCallId() === 'pay-1');
    expect(pay?.value()).toEqual({ receipt: 'r-9' });
  });

  it.each([
    ['a BigInt inside it', { amount: 10n }, /BigInt/],
    // JSON.stringify gives no JSON for these (not `null`): refused like a BigInt (#44 item 9a)
    ['a function', () => 'paid', /a function/],
    ['a symbol', Symbol('paid'), /a symbol/],
  ])(
    'refuses a complete decision whose result is not JSON (%s), and changes nothing',
    async (_, result, detail) => {
      const { store } = await crashedInPay();
      const again = paymentAgent(store);
      const refusal = again.agent.decide('s1', [{ toolCallId: 'pay-1', type: 'complete', result }]);
      await expect(refusal).rejects.toBeInstanceOf(ApprovalError);
      await expect(refusal).rejects.toMatchObject({
        code: 'APPROVAL_INVALID_RESULT',
        message: expect.stringMatching(detail),
      });
      expect((await store.load('s1'))?.state.pendingApprovals()).toHaveLength(1);
    },
  );
});

describe('at most once: approvals survive a crash', () => {
  it('announces approval.requested only once the waiting state is saved', async () => {
    const store = new InMemorySessionStore();
    const seen: unknown[] = [];
    const agent = createAgent({
      driver: scriptedDriver([{ toolCalls: [{ id: 'c1', name: 'send', args: {} }] }, { text: 'ok' }]),
      tools: { send: defineTool({ inputSchema: z.object({}), needsApproval: true, execute: () => 'sent' }) },
      store,
      approvalSecret: 'secret',
    });
    let saved: Promise<unknown> | undefined;
    const waiting = await agent.execute(AgentState.empty().withUserMessage('send'), {
      sessionId: 'a',
      onEvent: (event) => {
        if (event.type === 'approval.requested')
          saved = store.load('a').then((s) => seen.push(s?.state.pendingApprovals()));
      },
    });
    await saved;
    expect(seen).toEqual([waiting.pendingApprovals()]);
    expect(waiting.pendingApprovals()[0]).toMatchObject({ toolCallId: 'c1', reason: 'approval' });
  });
});
