import { spawn } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { scriptedDriver } from '../../src/drivers/scripted-driver';
import { FileSessionStore } from '../../src/persistence/file-session-store';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import type { SessionStore } from '../../src/persistence/session-store';
import { SqliteSessionStore } from '../../src/persistence/sqlite-session-store';
import { createAgent } from '../../src/runtime/create-agent';
import type { AgentError } from '../../src/state/agent-error';
import { AgentState } from '../../src/state/agent-state';
import type { AgentEvent } from '../../src/state/loop-events';
import type { ToolExecution } from '../../src/state/tool-execution';
import { defineTool, type ToolReconcile } from '../../src/tools/define-tool';
import { ledgerLines, ledgerLookup, type ReconcilePlace, reconcileAgent } from '../support/reconcile-agent';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'agent-machine-reconcile-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

type Kind = 'file' | 'sqlite';
const storePath = (dir: string, kind: Kind) =>
  join(dir, 'store', kind === 'sqlite' ? 'agents.db' : 'sessions');
const openStore = (path: string, kind: Kind): SessionStore =>
  kind === 'sqlite' ? new SqliteSessionStore(path) : new FileSessionStore(path);

/**
 * Runs the reconcile agent in a child process and SIGKILLs it while `pay` hangs after its effect
 * (the ledger has its line, the intent is saved): a real crash's leftovers, in `dir`.
 */
async function crashInPay(dir: string, kind: Kind, place: ReconcilePlace): Promise<void> {
  const ledger = join(dir, 'ledger.txt');
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'tests/support/reconcile-run.ts', kind, storePath(dir, kind), 's-1', ledger, place],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_c, signal) => resolve(signal)),
  );
  await vi.waitUntil(
    () => {
      if (child.exitCode !== null) throw new Error(`the child exited early: ${output}`);
      return ledgerLines(ledger).length === 1;
    },
    { timeout: 30_000, interval: 20 },
  );
  child.kill('SIGKILL');
  expect(await exited).toBe('SIGKILL');
}

/** A copy of the crashed run's store and ledger: each outcome resumes from the same leftovers. */
function copyOf(crashed: string): string {
  const dir = tempDir();
  cpSync(crashed, dir, { recursive: true });
  return dir;
}

/** The `pay` call's execution, in the root's steps or in its subagent's. */
function payExecution(state: AgentState): ToolExecution | undefined {
  for (const step of [...state.steps(), ...(state.currentStep() ? [state.currentStep() as never] : [])])
    for (const execution of step.toolExecutions()) {
      if (execution.name() === 'pay') return execution;
      const child = execution.childState();
      const inner = child && payExecution(child);
      if (inner) return inner;
    }
  return undefined;
}

/** Resumes the crashed session in this process with `reconcile`, collecting events and onError errors. */
async function resumeWith(
  crashed: string,
  kind: Kind,
  place: ReconcilePlace,
  reconcile: ToolReconcile<{ amount: number }> | 'lookup',
  options: { timeoutMs?: number } = {},
) {
  const dir = copyOf(crashed);
  const ledger = join(dir, 'ledger.txt');
  const store = openStore(storePath(dir, kind), kind);
  const errors: AgentError[] = [];
  const events: AgentEvent[] = [];
  const asked: Array<{ idempotencyKey: string; toolCallId: string }> = [];
  const given = reconcile === 'lookup' ? ledgerLookup(ledger) : reconcile;
  const agent = reconcileAgent(store, ledger, {
    place,
    reconcile: (request, signal) => {
      asked.push({ idempotencyKey: request.idempotencyKey, toolCallId: request.toolCallId });
      return given(request, signal);
    },
    timeoutMs: options.timeoutMs,
    hooks: [{ name: 'errors', onError: (_state, { error }) => void errors.push(error) }],
  });
  try {
    const state = await agent.resume('s-1', { onEvent: (event) => events.push(event) });
    const saved = (await store.load('s-1'))?.state;
    return { state, saved, errors, events, asked, ledger: ledgerLines(ledger) };
  } finally {
    await store.close();
  }
}

const reconciledEvents = (events: readonly AgentEvent[]) =>
  events.filter((e) => e.type === 'tool.reconciled');
const asksForPeople = (events: readonly AgentEvent[]) =>
  events.filter((e) => e.type === 'approval.requested' && e.toolCalls.length > 0);

describe.each([
  ['file', 'root'],
  ['file', 'subagent'],
  ['sqlite', 'root'],
  ['sqlite', 'subagent'],
] as const)('an interrupted unsafe call whose tool reconciles (%s store, call in the %s)', (kind, place) => {
  let crashed: string;
  let key: string;
  beforeAll(async () => {
    crashed = tempDir();
    await crashInPay(crashed, kind, place);
    key = (ledgerLines(join(crashed, 'ledger.txt'))[0] as string).split(' ')[0] as string;
  }, 60_000);

  it("'done': recorded with its result, not run again, resolution 'reconciled', no person asked", async () => {
    const run = await resumeWith(crashed, kind, place, 'lookup');
    expect(run.asked).toEqual([{ idempotencyKey: key, toolCallId: 'pay-1' }]);
    expect(run.ledger).toHaveLength(1);
    expect(run.state.status()).toBe('completed');
    expect(run.state.finalResponse()).toBe(place === 'root' ? 'paid it' : 'the payer is done');
    const pay = payExecution(run.state);
    expect(pay?.value()).toBe('paid 5');
    expect(pay?.resolution()).toBe('reconciled');
    // the model saw the result: the step after the call was asked with it
    const answered = place === 'root' ? run.state : payExecution(run.state) && childOf(run.state);
    const lastInputs =
      answered
        ?.lastStep()
        ?.inputMessages()
        .map((m) => m.content) ?? [];
    expect(JSON.stringify(lastInputs)).toContain('paid 5');
    expect(asksForPeople(run.events)).toEqual([]);
    expect(reconciledEvents(run.events)).toMatchObject([
      { toolCallId: 'pay-1', toolName: 'pay', status: 'done', error: null, value: 'paid 5' },
    ]);
    if (place === 'subagent')
      expect(reconciledEvents(run.events)[0]).toMatchObject({ path: ['payer'], callPath: ['sub-1'] });
    expect(run.errors).toEqual([]);
    // the saved session says so too (the journal and the store took the new resolution)
    expect(run.saved && payExecution(run.saved)?.resolution()).toBe('reconciled');
  });

  it("'not-done': runs once more, with the same idempotency key", async () => {
    const run = await resumeWith(crashed, kind, place, () => ({ status: 'not-done' }));
    expect(run.ledger).toEqual([`${key} pay-1`, `${key} pay-1`]);
    expect(run.state.status()).toBe('completed');
    expect(payExecution(run.state)?.value()).toBe('paid 5');
    expect(payExecution(run.state)?.resolution()).toBe('reconciled');
    expect(reconciledEvents(run.events)).toMatchObject([{ status: 'not-done', error: null }]);
    expect(asksForPeople(run.events)).toEqual([]);
  });

  it("'unknown': waits for a person as interrupted, not run again", async () => {
    const run = await resumeWith(crashed, kind, place, () => ({ status: 'unknown' }));
    expect(run.ledger).toHaveLength(1);
    expect(run.state.pendingApprovals()).toMatchObject([{ toolCallId: 'pay-1', reason: 'interrupted' }]);
    expect(reconciledEvents(run.events)).toMatchObject([{ status: 'unknown', error: null }]);
    expect(run.errors).toEqual([]);
  });

  it('a reconcile that throws: waits for a person, its error told to onError (RECONCILE_FAILED)', async () => {
    const run = await resumeWith(crashed, kind, place, () => {
      throw new Error('the payment API is down');
    });
    expect(run.ledger).toHaveLength(1);
    expect(run.state.pendingApprovals()).toMatchObject([{ toolCallId: 'pay-1', reason: 'interrupted' }]);
    expect(run.errors).toMatchObject([{ name: 'ReconcileError', code: 'RECONCILE_FAILED' }]);
    expect(run.errors[0]?.message).toContain('the payment API is down');
    expect(reconciledEvents(run.events)).toMatchObject([
      { status: 'unknown', error: { code: 'RECONCILE_FAILED' } },
    ]);
  });

  it("a reconcile that never answers: waits for a person once the tool's timeout passes (RECONCILE_TIMEOUT)", async () => {
    let aborted = false;
    const run = await resumeWith(
      crashed,
      kind,
      place,
      (_request, { signal }) => {
        signal.addEventListener('abort', () => (aborted = true));
        return new Promise(() => {});
      },
      { timeoutMs: 50 },
    );
    expect(aborted).toBe(true);
    expect(run.ledger).toHaveLength(1);
    expect(run.state.pendingApprovals()).toMatchObject([{ toolCallId: 'pay-1', reason: 'interrupted' }]);
    expect(run.errors).toMatchObject([{ code: 'RECONCILE_TIMEOUT' }]);
  });

  it('an answer that is not one: waits for a person (RECONCILE_INVALID_ANSWER)', async () => {
    const run = await resumeWith(crashed, kind, place, () => ({ status: 'paid' }) as never);
    expect(run.ledger).toHaveLength(1);
    expect(run.state.pendingApprovals()).toMatchObject([{ toolCallId: 'pay-1', reason: 'interrupted' }]);
    expect(run.errors).toMatchObject([{ code: 'RECONCILE_INVALID_ANSWER' }]);
  });
});

describe('reconcile on the other ways a run goes on (file store, call in the root)', () => {
  let crashed: string;
  beforeAll(async () => {
    crashed = tempDir();
    await crashInPay(crashed, 'file', 'root');
  }, 60_000);

  /** The crashed session's agent in this process, with the ledger lookup as `pay`'s reconcile. */
  function reopened() {
    const dir = copyOf(crashed);
    const ledger = join(dir, 'ledger.txt');
    const store = openStore(storePath(dir, 'file'), 'file');
    const asked: string[] = [];
    const lookup = ledgerLookup(ledger);
    const agent = reconcileAgent(store, ledger, {
      place: 'root',
      reconcile: (request, options) => {
        asked.push(request.toolCallId);
        return lookup(request, options);
      },
    });
    return { agent, store, asked, ledger };
  }

  it('chat: the reconciled step goes on, then the message is answered; no person asked', async () => {
    const { agent, store, asked, ledger } = reopened();
    const state = await agent.chat('s-1', 'and now?');
    await store.close();
    expect(asked).toEqual(['pay-1']);
    expect(ledgerLines(ledger)).toHaveLength(1);
    // the reconciled result is in the conversation before the new message
    const contents = state.messages().map((m) => JSON.stringify(m.content));
    const paid = contents.findIndex((c) => c.includes('paid 5'));
    expect(paid).toBeGreaterThan(-1);
    expect(contents.indexOf(JSON.stringify('and now?'))).toBeGreaterThan(paid);
    expect(state.status()).toBe('completed');
  });

  it("decide: a person's decision on the call wins, its reconcile is not asked", async () => {
    const { agent, store, asked, ledger } = reopened();
    const state = await agent.decide('s-1', [{ toolCallId: 'pay-1', type: 'reject' }]);
    await store.close();
    expect(asked).toEqual([]);
    expect(ledgerLines(ledger)).toHaveLength(1);
    expect(payExecution(state)?.resolution()).toBe('rejected');
  });

  it("a person's decision cannot pass itself off as a reconcile's ('reconciled' is dropped)", async () => {
    const { agent, store } = reopened();
    const state = await agent.decide('s-1', [
      { toolCallId: 'pay-1', type: 'complete', result: 'paid 5', reconciled: true } as never,
    ]);
    await store.close();
    expect(payExecution(state)?.resolution()).toBe('completed');
  });
});

describe('decide on a session with two interrupted calls, one whose tool reconciles', () => {
  it("the person's decision takes the other call; the reconcile settles its own", async () => {
    const effects: string[] = [];
    const inputSchema = z.object({ n: z.number() });
    const tools = (reconcile: boolean) => ({
      pay: defineTool({
        inputSchema,
        effect: 'unsafe',
        execute: async (_input, { toolCallId }) => void effects.push(toolCallId),
        ...(reconcile && { reconcile: () => ({ status: 'done', result: 'paid' }) as const }),
      }),
      send: defineTool({
        inputSchema,
        effect: 'unsafe',
        execute: async (_input, { toolCallId }) => void effects.push(toolCallId),
      }),
    });
    const script = () =>
      scriptedDriver([
        {
          toolCalls: [
            { name: 'pay', args: { n: 1 }, id: 'pay-1' },
            { name: 'send', args: { n: 2 }, id: 'send-1' },
          ],
        },
        { text: 'both settled' },
      ]);
    // the step's intent, as a crash while both calls ran leaves it
    const inner = new InMemorySessionStore();
    let intent: AgentState | null = null;
    const capturing = Object.assign(Object.create(inner) as InMemorySessionStore, {
      save: async (id: string, state: AgentState, version: number | null) => {
        if (state.approval()?.started?.length) intent ??= state;
        return inner.save(id, state, version);
      },
    });
    await createAgent({ driver: script(), tools: tools(false), store: capturing }).execute(
      AgentState.fromJSON(AgentState.empty().withUserMessage('go').toJSON()),
      { sessionId: 's' },
    );
    const store = new InMemorySessionStore();
    await store.save('s', AgentState.fromJSON((intent as unknown as AgentState).toJSON()), null);
    effects.length = 0;

    const agent = createAgent({ driver: script(), tools: tools(true), store });
    const state = await agent.decide('s', [{ toolCallId: 'send-1', type: 'reject' }]);
    expect(state.status()).toBe('completed');
    expect(effects).toEqual([]);
    const [pay, send] = state.steps()[0]?.toolExecutions() ?? [];
    expect(pay?.resolution()).toBe('reconciled');
    expect(pay?.value()).toBe('paid');
    expect(send?.resolution()).toBe('rejected');
  });
});

describe('defineTool({ reconcile })', () => {
  it("refuses a reconcile on a tool that is not 'unsafe', and one that is not a function", () => {
    const inputSchema = z.object({});
    const execute = async () => 'ok';
    expect(() => defineTool({ inputSchema, execute, reconcile: () => ({ status: 'unknown' }) })).toThrow(
      /reconcile.*only an 'unsafe' tool/,
    );
    expect(() => defineTool({ inputSchema, execute, effect: 'unsafe', reconcile: 'yes' as never })).toThrow(
      /reconcile.*expected a function/,
    );
  });
});

/** The payer subagent's final state, kept on the root's subagent call. */
function childOf(state: AgentState): AgentState | null {
  for (const step of state.steps())
    for (const execution of step.toolExecutions()) if (execution.childState()) return execution.childState();
  return null;
}
