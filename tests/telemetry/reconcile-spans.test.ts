import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InMemorySessionStore } from '../../src/persistence/in-memory-session-store';
import type { SessionStore } from '../../src/persistence/session-store';
import { AgentState } from '../../src/state/agent-state';
import { memoryTracer } from '../support/otel';
import { reconcileAgent } from '../support/reconcile-agent';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/**
 * A session as a crash during `pay` leaves it: the intent the run saved before `pay` started (a
 * store that keeps it and refuses what follows, as a process killed there would have written).
 */
async function interruptedSession(ledger: string): Promise<InMemorySessionStore> {
  const inner = new InMemorySessionStore();
  let intent: AgentState | null = null;
  const capturing: SessionStore = {
    load: (id) => inner.load(id),
    save: async (id, state, version) => {
      if (state.approval()?.started?.length) intent ??= state;
      return inner.save(id, state, version);
    },
    delete: (id) => inner.delete(id),
    list: () => inner.list(),
    close: () => inner.close(),
  } as SessionStore;
  await reconcileAgent(capturing, ledger, { place: 'root' }).execute(
    AgentState.empty().withUserMessage('Pay 5'),
    {
      sessionId: 's-1',
    },
  );
  const crashed = new InMemorySessionStore();
  await crashed.save('s-1', AgentState.fromJSON((intent as unknown as AgentState).toJSON()), null);
  return crashed;
}

describe('the span of a reconcile', () => {
  it.each([
    ['done', { status: 'done', result: 'paid 5' }],
    ['not-done', { status: 'not-done' }],
    ['unknown', { status: 'unknown' }],
  ] as const)("'reconcile_tool pay' says %s", async (status, answer) => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-machine-reconcile-span-'));
    dirs.push(dir);
    const ledger = join(dir, 'ledger.txt');
    const store = await interruptedSession(ledger);
    const otel = memoryTracer();
    const agent = reconcileAgent(store, ledger, {
      place: 'root',
      reconcile: () => answer,
      telemetry: { tracer: otel.tracer },
    });
    await agent.resume('s-1');
    const [span] = otel.named('reconcile_tool pay');
    expect(span?.attributes).toMatchObject({
      'gen_ai.tool.name': 'pay',
      'gen_ai.tool.call.id': 'pay-1',
      'agent_machine.reconcile.status': status,
    });
  });

  it("a reconcile that throws sets the span's error", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'agent-machine-reconcile-span-'));
    dirs.push(dir);
    const ledger = join(dir, 'ledger.txt');
    const store = await interruptedSession(ledger);
    const otel = memoryTracer();
    const agent = reconcileAgent(store, ledger, {
      place: 'root',
      reconcile: () => {
        throw new Error('down');
      },
      telemetry: { tracer: otel.tracer },
    });
    const state = await agent.resume('s-1');
    expect(state.pendingApprovals()).toMatchObject([{ reason: 'interrupted' }]);
    const [span] = otel.named('reconcile_tool pay');
    expect(span?.status.code).toBe(2);
    expect(span?.attributes['agent_machine.reconcile.status']).toBe('unknown');
  });
});
