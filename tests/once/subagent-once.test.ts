import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { Driver } from '../../src/drivers/driver';
import { type ScriptEntry, scriptedDriver } from '../../src/drivers/scripted-driver';
import { buildRunView } from '../../src/inspect/run-model';
import { FileSessionStore } from '../../src/persistence/file-session-store';
import type { SessionStore } from '../../src/persistence/session-store';
import { createAgent } from '../../src/runtime/create-agent';
import { AgentState } from '../../src/state/agent-state';
import { ExecutionStatus } from '../../src/state/execution-status';
import { defineTool } from '../../src/tools/define-tool';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-machine-once-sub-'));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** A scripted driver that counts its model calls (a resumed run must not repeat an answered one). */
function counted(script: readonly ScriptEntry[], calls: { n: number }): Driver {
  const inner = scriptedDriver(script);
  return {
    name: 'counted',
    infer: (state, context) => {
      calls.n++;
      return inner.infer(state, context);
    },
  };
}

interface TreeOptions {
  /** Runs inside `pay`'s execute, before its effect: the test copies the store there (the crash). */
  readonly crashAt?: () => void;
  /** `pay` needs approval (asked before it runs). */
  readonly asked?: boolean;
  /** The payer sits under a manager (root -> manager m1 -> payer j1). */
  readonly deeper?: boolean;
}

/**
 * root -> payer (call j1), whose `pay` is unsafe and `lookup` idempotent; with `deeper`, root ->
 * manager (m1) -> payer (j1). Counts effects, idempotency keys and model calls per agent.
 */
function payerTree(store: SessionStore, options: TreeOptions = {}) {
  const effects: string[] = [];
  const lookups: string[] = [];
  const keys: string[] = [];
  const calls = { root: { n: 0 }, manager: { n: 0 }, payer: { n: 0 } };
  const pay = defineTool({
    inputSchema: z.object({ amount: z.number() }),
    effect: 'unsafe',
    needsApproval: options.asked ?? false,
    execute: async ({ amount }, { toolCallId, idempotencyKey }) => {
      options.crashAt?.();
      keys.push(idempotencyKey);
      effects.push(toolCallId);
      return `paid ${amount}`;
    },
  });
  const lookup = defineTool({
    inputSchema: z.object({ q: z.string() }),
    execute: async ({ q }, { toolCallId }) => {
      lookups.push(toolCallId);
      return `found ${q}`;
    },
  });
  const payer = {
    description: 'Pays',
    driver: counted(
      [
        {
          toolCalls: [
            { id: 'pay-1', name: 'pay', args: { amount: 5 } },
            { id: 'look-1', name: 'lookup', args: { q: 'x' } },
          ],
        },
        { text: 'paid' },
      ],
      calls.payer,
    ),
    tools: { pay, lookup },
    subagents: { agents: {} },
  };
  const manager = {
    description: 'Manages',
    driver: counted(
      [{ toolCalls: [{ id: 'j1', name: 'payer', args: { task: 'pay 5' } }] }, { text: 'managed' }],
      calls.manager,
    ),
    tools: {},
    subagents: { agents: { payer } },
  };
  const first = options.deeper
    ? { id: 'm1', name: 'manager', args: { task: 'see to the payment' } }
    : { id: 'j1', name: 'payer', args: { task: 'pay 5' } };
  const agent = createAgent({
    driver: counted([{ toolCalls: [first] }, { text: 'root done' }], calls.root),
    store,
    subagents: { agents: options.deeper ? { manager } : { payer } },
  });
  return { agent, effects, lookups, keys, calls };
}

/** Runs the tree on a file store, copying the store as `pay` starts: what a process killed then leaves. */
async function crashedInPay(options: Omit<TreeOptions, 'crashAt'> = {}) {
  const dir = tempDir();
  const crashed = tempDir();
  const first = payerTree(new FileSessionStore(dir), {
    ...options,
    crashAt: () => {
      if (first.effects.length === 0) cpSync(dir, crashed, { recursive: true });
    },
  });
  let state = await first.agent.execute(AgentState.empty().withUserMessage('pay 5'), { sessionId: 's1' });
  if (options.asked) state = await first.agent.decide('s1', [{ toolCallId: 'pay-1', type: 'approve' }]);
  expect(state.status()).toBe(ExecutionStatus.Completed);
  return { store: new FileSessionStore(crashed), first };
}

const payOf = (state: AgentState, callPath: readonly string[] = ['j1']) => {
  let child: AgentState | null | undefined = state;
  for (const id of callPath)
    child = child
      ?.steps()
      .flatMap((s) => s.toolExecutions())
      .find((e) => e.toolCallId() === id)
      ?.childState();
  return child
    ?.steps()
    .flatMap((s) => s.toolExecutions())
    .find((e) => e.toolCallId() === 'pay-1');
};

describe('at most once inside a subagent: the intent save', () => {
  it("saves the subagent's step in the root session before its unsafe call starts; a load finds it interrupted with its callPath", async () => {
    const { store } = await crashedInPay();
    const loaded = await store.load('s1');
    expect(loaded?.state.status()).toBe(ExecutionStatus.InProgress);
    expect(loaded?.state.pendingApprovals()).toEqual([
      {
        toolCallId: 'pay-1',
        toolName: 'pay',
        args: { amount: 5 },
        path: ['payer'],
        callPath: ['j1'],
        reason: 'interrupted',
      },
    ]);
  });

  it('the run view lists it with its path and reason', async () => {
    const { store } = await crashedInPay();
    const loaded = await store.load('s1');
    const view = buildRunView(JSON.parse(JSON.stringify(loaded?.state)));
    expect(view.agents[0]?.pendingApprovals).toEqual([
      expect.objectContaining({ toolCallId: 'pay-1', path: ['payer'], reason: 'interrupted' }),
    ]);
  });

  it('lists a call two subagents deep with both subagent call ids', async () => {
    const { store } = await crashedInPay({ deeper: true });
    const loaded = await store.load('s1');
    expect(loaded?.state.pendingApprovals()).toEqual([
      expect.objectContaining({
        toolCallId: 'pay-1',
        path: ['manager', 'payer'],
        callPath: ['m1', 'j1'],
        reason: 'interrupted',
      }),
    ]);
  });
});

describe('at most once inside a subagent: after a crash', () => {
  it('resume waits for a person; no model call is repeated and the subagent is not started again', async () => {
    const { store } = await crashedInPay();
    const again = payerTree(store);
    const waiting = await again.agent.resume('s1');
    expect(waiting.pendingApprovals().map((p) => [p.toolCallId, p.callPath, p.reason])).toEqual([
      ['pay-1', ['j1'], 'interrupted'],
    ]);
    expect(again.effects).toEqual([]);
    expect(again.lookups).toEqual([]);
    expect([again.calls.root.n, again.calls.payer.n]).toEqual([0, 0]);
  });

  it('reject records it as not run inside the subagent; its idempotent call runs again; no answered model call is repeated', async () => {
    const { store } = await crashedInPay();
    const again = payerTree(store);
    const done = await again.agent.decide('s1', [{ toolCallId: 'pay-1', callPath: ['j1'], type: 'reject' }]);
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(done.finalResponse()).toBe('root done');
    expect(again.effects).toEqual([]);
    expect(again.lookups).toEqual(['look-1']);
    const pay = payOf(done);
    expect(pay?.wasBlocked()).toBe(true);
    expect(pay?.error()?.message).toMatch(/unknown; it was not run again/);
    expect(pay?.resolution()).toBe('rejected');
    // each agent is asked only for the step after the one the crash interrupted
    expect([again.calls.root.n, again.calls.payer.n]).toEqual([1, 1]);
  });

  it('approve runs it once more, with the same idempotencyKey', async () => {
    const { store, first } = await crashedInPay();
    const again = payerTree(store);
    const done = await again.agent.decide('s1', [{ toolCallId: 'pay-1', type: 'approve' }]);
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(again.effects).toEqual(['pay-1']);
    expect(again.keys).toEqual(first.keys);
    expect(payOf(done)?.resolution()).toBe('approved');
  });

  it("complete records the person's result inside the subagent without running the call", async () => {
    const { store } = await crashedInPay({ deeper: true });
    const again = payerTree(store, { deeper: true });
    const done = await again.agent.decide('s1', [
      { toolCallId: 'pay-1', callPath: ['m1', 'j1'], type: 'complete', result: { receipt: 'r-9' } },
    ]);
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(again.effects).toEqual([]);
    expect(payOf(done, ['m1', 'j1'])?.value()).toEqual({ receipt: 'r-9' });
    expect([again.calls.root.n, again.calls.manager.n, again.calls.payer.n]).toEqual([1, 1, 1]);
  });

  it('an approved call inside a subagent that a crash interrupted waits again, and is not run twice unasked', async () => {
    const { store } = await crashedInPay({ asked: true });
    const again = payerTree(store, { asked: true });
    const waiting = await again.agent.resume('s1');
    expect(again.effects).toEqual([]);
    expect(waiting.pendingApprovals()).toEqual([
      expect.objectContaining({ toolCallId: 'pay-1', callPath: ['j1'], reason: 'interrupted' }),
    ]);
  });
});

describe('at most once inside a subagent: what runs again', () => {
  it('a subagent whose unsafe call had not started runs again from its task (nothing of it was saved)', async () => {
    const dir = tempDir();
    const crashed = tempDir();
    const first = payerTree(new FileSessionStore(dir));
    // the crash comes as the payer's model is first asked: before any unsafe call of it started
    const payerDriver = first.agent.definition.subagents?.agents.payer?.driver as Driver;
    const infer = payerDriver.infer;
    let copied = false;
    payerDriver.infer = (state, context) => {
      if (!copied) cpSync(dir, crashed, { recursive: true });
      copied = true;
      return infer(state, context);
    };
    await first.agent.execute(AgentState.empty().withUserMessage('pay 5'), { sessionId: 's1' });
    const again = payerTree(new FileSessionStore(crashed));
    const done = await again.agent.resume('s1');
    expect(done.status()).toBe(ExecutionStatus.Completed);
    expect(again.effects).toEqual(['pay-1']);
    expect([again.calls.root.n, again.calls.payer.n]).toEqual([2, 2]);
  });

  it('parallel subagent calls save their intents one after the other into the one session', async () => {
    const dir = tempDir();
    const store = new FileSessionStore(dir);
    const crashed = tempDir();
    const effects: string[] = [];
    const pay = defineTool({
      inputSchema: z.object({}),
      effect: 'unsafe',
      execute: async (_input, { toolCallId, state }) => {
        effects.push(`${state.agentId()}:${toolCallId}`);
        if (effects.length === 2) cpSync(dir, crashed, { recursive: true });
        return 'paid';
      },
    });
    const payer = {
      description: 'Pays',
      driver: scriptedDriver([{ toolCalls: [{ id: 'pay-1', name: 'pay', args: {} }] }, { text: 'paid' }]),
      tools: { pay },
      subagents: { agents: {} },
    };
    const make = (on: SessionStore) =>
      createAgent({
        driver: scriptedDriver([
          {
            toolCalls: [
              { id: 'j1', name: 'payer', args: { task: 'pay a' } },
              { id: 'j2', name: 'payer', args: { task: 'pay b' } },
            ],
          },
          { text: 'root done' },
        ]),
        store: on,
        subagents: { agents: { payer } },
      });
    const done = await make(store).execute(AgentState.empty().withUserMessage('pay twice'), {
      sessionId: 's1',
    });
    expect(done.status()).toBe(ExecutionStatus.Completed);
    const loaded = await new FileSessionStore(crashed).load('s1');
    expect(
      loaded?.state
        .pendingApprovals()
        .map((p) => [p.callPath?.join('/'), p.toolCallId, p.reason])
        .sort(),
    ).toEqual([
      ['j1', 'pay-1', 'interrupted'],
      ['j2', 'pay-1', 'interrupted'],
    ]);
  });
});
